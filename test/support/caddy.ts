import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './free-port.js'
import { waitFor } from './wait-for.js'

const INSTALL_HINT =
  'caddy was not found. The Caddy forward-auth end-to-end test runs a real Caddy with forward_auth.\n' +
  'Install it with: sudo apt-get install -y caddy   (npm test does this itself when run as root)'

export interface Caddy {
  url: string
  port: number
  stop(): Promise<void>
  /** Everything Caddy logged so far. */
  log(): string
}

function caddyBinary(): string {
  for (const candidate of ['/usr/bin/caddy', 'caddy']) {
    if (!spawnSync(candidate, ['version']).error) return candidate
  }
  throw new Error(INSTALL_HINT)
}

/**
 * Runs Caddy in the foreground with `site(port)` (a site block for http://127.0.0.1:port) after global options
 * that keep it to itself: no admin endpoint, no automatic HTTPS, and HOME and XDG directories (where it would
 * keep certificates and an autosaved config) in a temp dir.
 */
export async function startCaddy(site: (port: number) => string): Promise<Caddy> {
  const binary = caddyBinary()
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'keygate-caddy-'))
  const config = join(dir, 'Caddyfile')
  writeFileSync(config, `{\n\tadmin off\n\tauto_https off\n}\n\n${site(port)}\n`)
  const child: ChildProcess = spawn(binary, ['run', '--config', config, '--adapter', 'caddyfile'], {
    env: { PATH: process.env.PATH ?? '', HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout?.on('data', (chunk) => (output += String(chunk)))
  child.stderr?.on('data', (chunk) => (output += String(chunk)))
  const url = `http://127.0.0.1:${port}`
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`caddy exited ${child.exitCode}: ${output}`)
      return (await fetch(`${url}/__caddy_up`).catch(() => undefined)) !== undefined
    },
    'caddy to listen',
    10_000,
    25,
  )
  return {
    url,
    port,
    log: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGTERM')
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
