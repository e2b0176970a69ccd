import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const out = mkdtempSync(join(tmpdir(), 'keygate-build-'))
afterAll(() => rmSync(out, { recursive: true, force: true }))

/** `node scripts/build.mjs --out <out>`: the build npm start and npm install run, into a directory of the test's. */
function build() {
  const run = spawnSync(process.execPath, ['scripts/build.mjs', '--quiet', '--out', out], {
    cwd: ROOT,
    encoding: 'utf8',
  })
  expect(run.status, run.stderr).toBe(0)
}

const builtModules = () =>
  readdirSync(out, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.js') && !file.startsWith('console/') && !file.startsWith('portal/'))
    .map((file) => join(out, file))

describe('the build (scripts/build.mjs)', () => {
  it('writes every module the bin and the bench run, each importing only modules it wrote', () => {
    // Left by a build of a tree that had it: the build must take it away.
    mkdirSync(join(out, 'shared'), { recursive: true })
    writeFileSync(join(out, 'shared', 'deleted-module.js'), 'export const stale = true\n')
    // A page's bundles of an earlier build: the control plane serves every file in the folder, so they must go too.
    const staleBundles = ['console/console-STALE234.js', 'portal/portal-STALE234.js', 'portal/portal-STALE234.css']
    for (const bundle of staleBundles) {
      mkdirSync(dirname(join(out, bundle)), { recursive: true })
      writeFileSync(join(out, bundle), 'stale\n')
    }
    build()
    expect(existsSync(join(out, 'shared', 'deleted-module.js'))).toBe(false)
    for (const bundle of staleBundles) expect(existsSync(join(out, bundle)), bundle).toBe(false)
    for (const entry of [
      'cli/keygate.js',
      'bench/run.js',
      'deploy/check/check-deploy.js',
      'console/index.html',
      'portal/index.html',
    ])
      expect(existsSync(join(out, entry)), entry).toBe(true)
    const missing: string[] = []
    for (const module of builtModules()) {
      for (const [, specifier] of readFileSync(module, 'utf8').matchAll(
        /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g,
      ))
        if (!existsSync(join(dirname(module), specifier!))) missing.push(`${relative(out, module)} → ${specifier}`)
    }
    expect(missing).toEqual([])
    // The bench's helpers from test/support/ are built too, as tsc built what the program imports.
    expect(builtModules().some((module) => relative(out, module).startsWith('test/support/'))).toBe(true)
  })
})
