import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort } from './free-port.js'
import { waitFor } from './wait-for.js'

/** Starting and stopping a throw-away redis-server; no test framework here, so the benches use it too. */
export interface RedisServer {
  url: string
  port: number
  /** The server's working directory (AOF files live here); kept by stop({ keepDir: true }). */
  dir: string
  /** A plain client for assertions and fault injection; closed by stop(). */
  admin: Redis
  /** Sends the server a signal: SIGSTOP and SIGCONT to freeze and thaw it, SIGKILL to crash it but keep it listed. */
  signal(signal: NodeJS.Signals): void
  /** SIGKILLs the server (as a crash would) and removes its directory unless `keepDir`. */
  stop(options?: { keepDir?: boolean }): Promise<void>
}

const INSTALL_HINT =
  'redis-server was not found on PATH. The integration and end-to-end tests start their own Redis.\n' +
  'Install it with: sudo apt-get install -y redis-server   (Debian/Ubuntu; macOS: brew install redis)'

export interface RedisServerOptions {
  /** Extra redis-server arguments, e.g. ['--appendonly', 'yes']; later ones win. */
  args?: string[]
  port?: number
  /** Reuse a working directory (to restart a server from its AOF). */
  dir?: string
}

/** Starts a throw-away redis-server on a free port (no persistence unless asked) and waits until it answers. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  if (spawnSync('redis-server', ['--version']).error) throw new Error(INSTALL_HINT)
  const port = options.port ?? (await freePort())
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'keygate-redis-'))
  const child: ChildProcess = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      ...(options.args ?? []),
    ],
    { stdio: 'ignore' },
  )
  const admin = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => 50,
  })
  admin.on('error', () => {})
  let refused: unknown
  const started = await waitFor(
    async () => {
      if (child.exitCode !== null) return 'exited'
      try {
        await admin.connect()
        await admin.ping()
        return 'answering'
      } catch (err) {
        refused = err
        admin.disconnect()
        return undefined
      }
    },
    `redis-server on port ${port}`,
    10_000,
    50,
  ).catch(() => 'timed out')
  if (started !== 'answering') {
    child.kill('SIGKILL')
    throw new Error(`redis-server on port ${port} did not start: ${String(refused)}`, { cause: refused })
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    admin,
    signal: (signal) => void child.kill(signal),
    async stop(stopOptions: { keepDir?: boolean } = {}) {
      admin.disconnect()
      // After a kill, exitCode stays null and signalCode is set: either means it has exited.
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGKILL')
        await exited
      }
      if (!stopOptions.keepDir) rmSync(dir, { recursive: true, force: true })
    },
  }
}
