#!/usr/bin/env node
// Builds dist/: every TypeScript module of the service, the bench and the deploy checks transpiled one file to one
// file by esbuild (types stripped, not checked), and the admin console and the customer portal bundled
// (console/build.mjs, portal/build.mjs), their copies of shared/ui-shapes.ts and of what their API answers written
// first (scripts/bundle-page.mjs).
// Transpiling takes well under a second where a type-checking compile of the tree takes many, so that `npm start`
// answers within seconds of a fresh install; the type-check runs in `npm test` (`npm run typecheck`), which is where
// a type error must stop a change. Run by `npm install` (prepare), `npm start` and every script that runs from dist/.
//
// --quiet: no progress lines (the scripts that only need dist/ to be current). --out DIR: build there instead of
// dist/ (a test checks what the build writes without touching the dist/ other tests run).
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { consolePage } from '../console/build.mjs'
import { portalPage } from '../portal/build.mjs'
import { bundlePage } from './bundle-page.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const quiet = process.argv.includes('--quiet')
const outAt = process.argv.indexOf('--out')
const out = outAt > 0 && process.argv[outAt + 1] ? resolve(process.argv[outAt + 1]) : join(root, 'dist')
// The folders tsconfig.json compiles: what runs from dist/.
const SOURCES = ['cli', 'shared', 'control-plane', 'verifier', 'bench', 'deploy']

/**
 * Every .ts file under `dir` that is part of the program (tests of the bench are run by vitest from source). A folder
 * that is not there is skipped: the image's build is given the service's folders only, not bench/ or deploy/.
 */
function typescriptFiles(dir) {
  if (!existsSync(join(root, dir))) return []
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
}

/** A module's relative imports (static, dynamic, re-exports): each `./x.js`, built from `./x.ts`. */
const IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)\.js['"]/g

/**
 * The files to build: every module of the folders, and any module elsewhere they import (tsc compiles those too: the
 * bench runs helpers of test/support/ from dist/).
 */
function programFiles() {
  const files = new Set(SOURCES.flatMap(typescriptFiles))
  const queue = [...files]
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const [, specifier] of readFileSync(join(root, file), 'utf8').matchAll(IMPORT)) {
      const imported = relative(root, join(root, dirname(file), `${specifier}.ts`))
      if (files.has(imported) || !existsSync(join(root, imported))) continue
      files.add(imported)
      queue.push(imported)
    }
  }
  return [...files]
}

/** Every .js and .js.map file under `dir`, as paths from the root. */
function builtFiles(dir) {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.js(\.map)?$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
}

const started = performance.now()
if (!quiet) process.stdout.write('Building Keygate (esbuild) … ')
const result = await build({
  absWorkingDir: root,
  entryPoints: programFiles(),
  outdir: out,
  outbase: '.',
  bundle: false,
  platform: 'node',
  format: 'esm',
  // tsconfig.json's target: class fields, top-level await and the rest as written.
  target: 'es2022',
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
})
// A module deleted from the sources must not linger in dist/ and be imported from there. Removed after the build,
// not before: a keygate started from dist/ meanwhile finds every module it imports.
const written = new Set(Object.keys(result.metafile.outputs).map((file) => join(root, file)))
// The pages' folders are rebuilt whole by their own builds.
const pages = [join(out, 'console'), join(out, 'portal')]
for (const file of builtFiles(out)) {
  if (!written.has(file) && !pages.some((folder) => file.startsWith(folder))) rmSync(file)
}
await Promise.all([
  bundlePage({ ...consolePage, out: join(out, 'console') }),
  bundlePage({ ...portalPage, out: join(out, 'portal') }),
])
if (!quiet) process.stdout.write(`done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
