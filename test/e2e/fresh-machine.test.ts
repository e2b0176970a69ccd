import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process'
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../support/free-port.js'
import { startRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

/**
 * The README's two commands on a fresh machine: a copy of this checkout (what git tracks or would track, no
 * node_modules, no dist), and a PATH without any of the system tools `npm test` installs (system-tools.json) nor
 * apt-get.
 * `npm install && npm start` must work with Node alone, printing no EBADENGINE; `npm test` must stop at once
 * with the one command that installs what is missing, not fail minutes later.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
/** The programs `npm test` runs and the Debian/Ubuntu package of each: test/support/system-tools.mjs's table. */
const TOOLS = JSON.parse(readFileSync(join(ROOT, 'test/support/system-tools.json'), 'utf8')) as {
  program: string
  apt: string
}[]
const PACKAGES = TOOLS.map((tool) => tool.apt).join(' ')
const HIDDEN = new Set([...TOOLS.map((tool) => tool.program), 'apt-get', 'apt'])
let work: string
let clone: string
let env: NodeJS.ProcessEnv

/** A directory of links to every program on the PATH but the hidden ones: the PATH of a machine without them. */
function pathWithout(hidden: Set<string>, into: string): string {
  mkdirSync(into)
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      continue
    }
    for (const name of names) {
      if (hidden.has(name)) continue
      try {
        symlinkSync(join(dir, name), join(into, name))
      } catch {
        // The first directory on the PATH that has a name wins, as it does for the shell.
      }
    }
  }
  return into
}

function run(command: string, args: string[], timeout = 170_000): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd: clone, env, encoding: 'utf8', timeout })
}

/** The `n`th `sh` block under a heading of the README (the clone's: what a user of this checkout reads). */
function readmeBlock(heading: string, n = 0): string {
  const readme = readFileSync(join(clone, 'README.md'), 'utf8')
  const at = readme.indexOf(`\n${heading}\n`)
  expect(at, heading).toBeGreaterThan(0)
  const end = readme.indexOf('\n## ', at + 1)
  const blocks = [...readme.slice(at, end < 0 ? undefined : end).matchAll(/\n```sh\n([\s\S]*?)\n```\n/g)]
  expect(blocks.length, `${heading}: sh blocks`).toBeGreaterThan(n)
  return blocks[n]![1]!
}

/** `block` with each `[from, to]` replaced: every `from` must be there, so the README cannot drift from the test. */
function filled(block: string, replacements: [string, string][]): string {
  for (const [from, to] of replacements) {
    expect(block, from).toContain(from)
    block = block.split(from).join(to)
  }
  return block
}

/** A README block run by bash in the clone, stopping at the first failing command as a careful user would. */
function runBlock(block: string, cwd = clone, extraEnv: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  return spawnSync('bash', ['-e', '-o', 'pipefail', '-c', block], {
    cwd,
    env: { ...env, ...extraEnv },
    encoding: 'utf8',
    timeout: 100_000,
  })
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'keygate-fresh-'))
  clone = join(work, 'keygate')
  const files = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' })
  for (const file of files.stdout.split('\0').filter(Boolean)) {
    mkdirSync(dirname(join(clone, file)), { recursive: true })
    try {
      cpSync(join(ROOT, file), join(clone, file))
    } catch {
      // A file git lists as deleted in the working tree: the clone lacks it too.
    }
  }
  const bin = pathWithout(HIDDEN, join(work, 'bin'))
  const keep = ['HOME', 'TMPDIR', 'LANG', 'npm_config_cache']
  env = {
    ...Object.fromEntries(keep.flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : []))),
    PATH: bin,
    // The registry is reached through npm's cache when it can: the same packages, less waiting.
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  }
})
afterAll(async () => {
  // A whole npm install: thousands of files, slow to delete on a busy machine.
  await rm(work, { recursive: true, force: true })
}, 180_000)

describe("the README's two commands on a fresh machine", () => {
  it('npm install prints no EBADENGINE nor unreviewed install scripts; npm start answers within 15 s, and the walk-through and the SDK run as pasted', async () => {
    const install = run('npm', ['install'])
    expect(install.status, install.stderr).toBe(0)
    expect(install.stdout + install.stderr).not.toContain('EBADENGINE')
    // package.json's allowScripts covers every dependency's install script npm would otherwise report as unreviewed.
    expect(install.stdout + install.stderr).not.toMatch(/install-scripts|install scripts/i)

    const port = await freePort()
    const started = Date.now()
    const start = spawn('npm', ['start'], { cwd: clone, env: { ...env, PORT: String(port) }, detached: true })
    let output = ''
    start.stdout.on('data', (chunk) => (output += String(chunk)))
    start.stderr.on('data', (chunk) => (output += String(chunk)))
    try {
      // The first minute: answering on its port within 15 s of `npm start`, with a generous margin on a loaded
      // machine (the start itself takes a second or two).
      await waitFor(
        async () => (await fetch(`http://127.0.0.1:${port}/livez`).catch(() => null))?.status === 200,
        'npm start to answer',
        15_000,
        100,
      )
      expect(Date.now() - started).toBeLessThan(15_000)
      await waitFor(() => output.includes('root key: kgroot_'), 'npm start to print its banner', 5_000, 100)
      expect(output).toContain(`URL:      http://127.0.0.1:${port}`)
      // It said what it was doing before the banner, and nothing of its logs.
      const beforeBanner = output.slice(0, output.indexOf('Keygate dev server'))
      expect(beforeBanner).toMatch(/Building Keygate .* done in [\d.]+ s\nStarting the dev server/)
      expect(beforeBanner).not.toMatch(/INFO|WARN|"level"/)
      // The walk-through, as a user pastes it: the export line npm start printed, then the README's block.
      const exported = /^ {2}(export KG=.*)$/m.exec(output)?.[1]
      expect(exported, output).toBeDefined()
      const walk = runBlock(`${exported}\n${readmeBlock('## Walk-through')}`)
      expect(walk.status, walk.stdout + walk.stderr).toBe(0)
      const lines = walk.stdout.split('\n')
      expect(lines[0]).toMatch(/^api_\w+$/)
      expect(lines[1]).toMatch(/^\{"keyId":"key_\w+","key":"sk_\w+"\}$/)
      // Each verify the block shows, in order, as its comments say: valid with the identity, disabled, valid again.
      const verdicts = lines.filter((line) => line.startsWith('{"valid"')).map((line) => JSON.parse(line))
      expect(verdicts).toMatchObject([
        { valid: true, code: 'VALID', identity: { externalId: 'acme' }, remaining: 999 },
        { valid: false, code: 'DISABLED', enabled: false },
        { valid: true, code: 'VALID', remaining: 998 },
      ])
      expect(lines.filter((line) => line === '{}')).toHaveLength(2)
      // getKey: the key's record, its start but never the key.
      const key = lines.map((line) => (line.startsWith('{"id":"key_') ? JSON.parse(line) : undefined)).find(Boolean)
      expect(key).toMatchObject({ start: expect.stringMatching(/^sk_/), name: 'acme checkout', remaining: 998 })
      expect(JSON.stringify(key)).not.toContain(JSON.parse(lines[1]!).key)
      expect(walk.stdout).toMatch(/"total":1}$/m)

      // The SDK block, in a directory of the user's own, with the walk-through's variables.
      const [, kg, rootKey] = /export KG=(\S+) ROOT_KEY=(\S+)/.exec(exported!)!
      const project = join(work, 'my-project')
      mkdirSync(project)
      const sdk = runBlock(readmeBlock("## From code: Unkey's SDK"), project, { KG: kg, ROOT_KEY: rootKey })
      expect(sdk.status, sdk.stdout + sdk.stderr).toBe(0)
      expect(sdk.stdout.trim().split('\n').at(-1)).toBe('true VALID 999 acme')
    } finally {
      // npm start runs node under npm: stop the whole process group.
      process.kill(-start.pid!, 'SIGTERM')
    }
  }, 300_000)

  it("runs 'Run it on Redis' as pasted, on a Redis and ports of its own: root key, servers, a key verified, both stopped", async () => {
    const redis = await startRedisServer()
    try {
      const [controlPlanePort, verifierPort] = [await freePort(), await freePort()]
      const block = filled(readmeBlock('## Run it on Redis'), [
        ['redis://127.0.0.1:6379', redis.url],
        ['7070', String(controlPlanePort)],
        ['7071', String(verifierPort)],
      ])
      const shell = runBlock(block)
      const output = shell.stdout + shell.stderr
      expect(shell.status, output).toBe(0)
      expect(shell.stdout.match(/^\{"status":"ready"\}$/gm)).toHaveLength(2)
      expect(shell.stdout).toContain('{"valid":true,"code":"VALID"')
      // The servers' logs are where git ignores them.
      const ignored = spawnSync('git', ['check-ignore', 'control-plane.log', 'verifier.log'], { cwd: ROOT })
      expect(ignored.status, 'the logs are ignored by git').toBe(0)
      // The block stops what it started: nothing of it is left listening.
      const ports = await Promise.all(
        [controlPlanePort, verifierPort].map((port) => fetch(`http://127.0.0.1:${port}/livez`).catch(() => null)),
      )
      expect(ports).toEqual([null, null])
    } finally {
      await redis.stop()
    }
  }, 120_000)

  it("the README names the same programs and packages as the table npm test's first step reads", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const programs = /`npm test` also runs real programs:\s+([^.]+)\./.exec(readme)?.[1]
    expect(programs?.match(/`[^`]+`/g)).toEqual(TOOLS.map((tool) => `\`${tool.program}\``))
    expect(readme.replace(/\s+/g, ' ')).toContain(
      `(\`sudo apt-get install -y --no-install-recommends ${PACKAGES}\`, less what is there already)`,
    )
  })

  it('npm test stops at once, naming the one command that installs what is missing', () => {
    const started = Date.now()
    const test = run('npm', ['test'], 60_000)
    const output = test.stdout + test.stderr
    expect(test.status, output).not.toBe(0)
    for (const tool of TOOLS) expect(output).toContain(`  ${tool.program} (Debian/Ubuntu package ${tool.apt}), for `)
    expect(output).toContain(`  sudo apt-get install -y --no-install-recommends ${PACKAGES}\n`)
    // It stopped before building or testing anything.
    expect(output).not.toMatch(/RUN {2}v\d|Test Files/)
    expect(Date.now() - started).toBeLessThan(30_000)
  })

  it('with apt-get and root, npm test installs with it first (a stand-in apt-get: it records its call)', () => {
    const withApt = join(work, 'bin-apt')
    pathWithout(HIDDEN, withApt)
    const calls = join(work, 'apt-get-calls')
    // A real apt-get would install the packages on this machine; this one only records what it was asked.
    writeFileSync(join(withApt, 'apt-get'), `#!/bin/sh\necho "$*" >> '${calls}'\n`)
    chmodSync(join(withApt, 'apt-get'), 0o755)
    const test = spawnSync('npm', ['test'], {
      cwd: clone,
      env: { ...env, PATH: withApt },
      encoding: 'utf8',
      timeout: 120_000,
    })
    const output = test.stdout + test.stderr
    if (process.getuid?.() === 0) {
      expect(output).toContain(`npm test: installing from Debian's packages: ${PACKAGES}`)
      expect(readFileSync(calls, 'utf8')).toBe(`install -y -qq --no-install-recommends ${PACKAGES}\n`)
      // apt-get "succeeded", but the programs are still not on the PATH, and it says so.
      expect(output).toContain('apt-get ran, but these programs are still not on the PATH')
    }
    expect(output).toContain(`  sudo apt-get install -y --no-install-recommends ${PACKAGES}\n`)
    expect(test.status).not.toBe(0)
  })
})
