import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { runKeygate, startKeygate, type KeygateProcess } from '../support/processes.js'
import { waitFor } from '../support/wait-for.js'

/**
 * Runs the lines `keygate dev` prints under "Try it from another terminal" in bash, as a user would paste them in
 * another terminal: one with nothing but a PATH, typing `typed` when asked. Returns the last line printed.
 */
function runPrintedTry(output: string, typed = ''): string {
  // Its indented lines, up to the blank line: the ones to paste (the others say how).
  const block = /Try it from another terminal.*\n((?:.+\n)+)/.exec(output)?.[1]
  expect(block, output).toBeDefined()
  const lines = block!.split('\n').filter((line) => line.startsWith('  '))
  const shell = spawnSync('bash', ['-c', lines.join('\n')], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
    input: typed,
  })
  expect(shell.status, shell.stderr).toBe(0)
  return shell.stdout.trimEnd().split('\n').at(-1)!
}

describe('the keygate command line', () => {
  const running: KeygateProcess[] = []
  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()))
  })

  it('prints --help for every command', async () => {
    const top = await runKeygate(['--help'])
    expect(top.code).toBe(0)
    for (const command of ['control-plane', 'verifier', 'dev', 'root-key create']) {
      expect(top.stdout).toContain(command)
      const help = await runKeygate([...command.split(' '), '--help'])
      expect(help.code).toBe(0)
      expect(help.stdout).toContain(`Usage: keygate ${command}`)
    }
    expect((await runKeygate(['verifier', '--help'])).stdout).toMatch(/--redis\s+REDIS_URL/)
  })

  it('answers -h like --help, --version on any command, and names the closest flag or command to a typo', async () => {
    const version = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version
    for (const args of [['--version'], ['dev', '--version'], ['root-key', 'list', '--version']]) {
      const answer = await runKeygate(args)
      expect(answer, args.join(' ')).toMatchObject({ code: 0, stdout: `keygate ${version}\n` })
    }
    expect(await runKeygate(['-h'])).toMatchObject({ code: 0, stdout: (await runKeygate(['--help'])).stdout })
    const help = await runKeygate(['verifier', '-h'])
    expect(help).toMatchObject({ code: 0, stdout: (await runKeygate(['verifier', '--help'])).stdout })
    expect(help.stdout).toMatch(/-h, --help .*\n.*--version/)
    const typo = await runKeygate(['dev', '--prot', '8080'])
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain('unknown option --prot (did you mean --port?)')
    const command = await runKeygate(['verifer', '--port', '1'])
    expect(command.code).toBe(2)
    expect(command.stderr).toContain('unknown command "verifer --port 1" (did you mean keygate verifier?)')
    expect((await runKeygate(['root-key', 'lst'])).stderr).toContain('(did you mean keygate root-key list?)')
    expect((await runKeygate(['zz'])).stderr).not.toContain('did you mean')
  })

  it('lists a group of commands for its first words, however asked, and prints the version for -v and version', async () => {
    const group = await runKeygate(['root-key'])
    expect(group.code, group.stderr).toBe(0)
    expect(group.stdout).toContain('Usage: keygate root-key <command> [options]')
    for (const command of ['root-key create', 'root-key list', 'root-key revoke <rootKeyId>', 'root-key roll']) {
      expect(group.stdout).toContain(`  ${command}`)
    }
    expect(group.stdout).not.toContain('  control-plane')
    for (const args of [
      ['root-key', '--help'],
      ['root-key', '-h'],
      ['help', 'root-key'],
    ]) {
      expect(await runKeygate(args), args.join(' ')).toMatchObject({ code: 0, stdout: group.stdout })
    }
    const bootstrap = await runKeygate(['help', 'root-key', 'bootstrap'])
    expect(bootstrap.code).toBe(0)
    expect(bootstrap.stdout).toContain('Usage: keygate root-key bootstrap <command> [options]')
    expect(bootstrap.stdout).toContain('  root-key bootstrap disable')
    expect(bootstrap.stdout).not.toContain('  root-key create')
    // `help <command>` is the command's --help; a group with something else after it is not a command.
    expect(await runKeygate(['help', 'verifier'])).toMatchObject({
      code: 0,
      stdout: (await runKeygate(['verifier', '--help'])).stdout,
    })
    const stray = await runKeygate(['root-key', '--frobnicate'])
    expect(stray.code).toBe(2)
    expect(stray.stderr).toContain('Usage: keygate root-key <command>')
    const version = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version
    for (const args of [['-v'], ['version']]) {
      expect(await runKeygate(args), args.join(' ')).toMatchObject({ code: 0, stdout: `keygate ${version}\n` })
    }
    // A usage error, on stderr (the line's readings are test/unit/command-line.test.ts's).
    const extra = await runKeygate(['version', 'extra'])
    expect(extra).toMatchObject({ code: 2, stdout: '' })
    expect(extra.stderr).toContain('keygate: version takes nothing after it')
  })

  it('fails at start-up listing every bad option, with a non-zero exit', async () => {
    const result = await runKeygate(['verifier', '--port', 'nope', '--cache-size', '0'], {
      REDIS_URL: 'mysql://x',
      LOG_LEVEL: 'chatty',
    })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('--port: must be a whole number')
    expect(result.stderr).toContain('--cache-size: must be a whole number from 1')
    expect(result.stderr).toContain('REDIS_URL: must be a redis://')
    expect(result.stderr).toContain('LOG_LEVEL: must be one of')
    expect((await runKeygate(['frobnicate'])).code).toBe(2)
  })

  it('runs `keygate dev` without Redis, printing its URL and a root key that works', async () => {
    const dev = await startKeygate(['dev'], { REDIS_URL: 'redis://127.0.0.1:1' })
    running.push(dev)
    const rootKey = /root key: (\S+)/.exec(dev.output())?.[1]
    expect(rootKey).toMatch(/^kgroot_/)
    expect(dev.output()).toContain(`URL:      ${dev.url}`)
    expect(dev.output()).toContain(`API docs: ${dev.url}/docs`)
    const headers = { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' }
    const api = (await (
      await fetch(`${dev.url}/v1/apis.createApi`, { method: 'POST', headers, body: JSON.stringify({ name: 'dev' }) })
    ).json()) as { apiId: string }
    const created = (await (
      await fetch(`${dev.url}/v1/keys.createKey`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ apiId: api.apiId }),
      })
    ).json()) as { key: string; keyId: string }
    const verify = () =>
      fetch(`${dev.url}/v1/keys.verifyKey`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key: created.key }),
      }).then((r) => r.json() as Promise<{ valid: boolean; code: string }>)
    expect(await verify()).toMatchObject({ valid: true })
    await fetch(`${dev.url}/v1/keys.updateKey`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ keyId: created.keyId, enabled: false }),
    })
    expect(await verify()).toMatchObject({ valid: false, code: 'DISABLED' })
    expect(await (await fetch(`${dev.url}/v1/liveness`)).json()).toMatchObject({ services: { store: 'memory' } })
    // A local tool takes a receiver on this machine, and its banner says so.
    expect(dev.output()).toMatch(/webhooks: private addresses allowed/)
    const endpoint = await fetch(`${dev.url}/v1/webhooks.createEndpoint`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: 'http://127.0.0.1:9/hook' }),
    })
    expect(endpoint.status, await endpoint.clone().text()).toBe(200)
  })

  it('keygate dev prints a first call that works as printed, and logs one readable line per request', async () => {
    const dev = await startKeygate(['dev'], { LOG_LEVEL: 'info' })
    running.push(dev)
    const shell = runPrintedTry(dev.output())
    expect(JSON.parse(shell)).toMatchObject({ apiId: expect.stringMatching(/^api_/), name: 'my-api' })
    await waitFor(
      () => /^\d\d:\d\d:\d\d POST \/v1\/apis\.createApi 200 \(\d+\.\d ms\)$/m.test(dev.output()),
      'the request line',
    )
    expect(dev.output()).not.toContain('{"level"')
  })

  it('uses KEYGATE_ROOT_KEY in dev mode and never prints it', async () => {
    const rootKey = 'my-own-dev-root-key-123456'
    const dev = await startKeygate(['dev'], { KEYGATE_ROOT_KEY: rootKey })
    running.push(dev)
    expect(dev.output()).toContain('(from KEYGATE_ROOT_KEY)')
    const ok = await fetch(`${dev.url}/v1/apis.createApi`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
      body: '{"name":"dev"}',
    })
    expect(ok.status).toBe(200)
    // The printed lines work in another terminal, which has no KEYGATE_ROOT_KEY: they ask for the key.
    expect(JSON.parse(runPrintedTry(dev.output(), `${rootKey}\n`))).toMatchObject({ name: 'my-api' })
    expect(dev.output()).not.toContain(rootKey)
  })

  it('keygate dev says it is starting, then prints the banner with no log line before it, and stops quietly', async () => {
    const dev = await startKeygate(['dev'], { LOG_LEVEL: 'info' })
    const banner = dev.output().indexOf('Keygate dev server')
    expect(banner, dev.output()).toBeGreaterThan(0)
    expect(dev.output().slice(0, banner).trim()).toBe(
      'Starting the dev server (control plane and verifier in one process, in memory) …',
    )
    await fetch(`${dev.url}/livez`)
    const stopping = dev.output().length
    // Ctrl-C at the terminal.
    expect(await dev.stop('SIGINT')).toBe(0)
    expect(dev.output().slice(stopping)).not.toMatch(/WARN|ERROR/)
  })

  it('exits 0 on SIGTERM after draining', async () => {
    const dev = await startKeygate(['dev'])
    expect(await dev.stop('SIGTERM')).toBe(0)
  })
})
