import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort } from './free-port.js'

export interface RedisServer {
  url: string
  port: number
  /** A plain client for assertions and fault injection; closed by stop(). */
  admin: Redis
  stop(): Promise<void>
}

const INSTALL_HINT =
  'redis-server was not found on PATH. The integration and end-to-end tests start their own Redis.\n' +
  'Install it with: sudo apt-get install -y redis-server   (Debian/Ubuntu; macOS: brew install redis)'

/** Starts a throw-away redis-server on a free port (no persistence) and waits until it answers. */
export async function startRedisServer(extraArgs: string[] = [], fixedPort?: number): Promise<RedisServer> {
  if (spawnSync('redis-server', ['--version']).error) throw new Error(INSTALL_HINT)
  const port = fixedPort ?? (await freePort())
  const dir = mkdtempSync(join(tmpdir(), 'keygate-redis-'))
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extraArgs],
    { stdio: 'ignore' },
  )
  const admin = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 50 })
  admin.on('error', () => {})
  const deadline = Date.now() + 10_000
  for (;;) {
    try {
      await admin.connect()
      await admin.ping()
      break
    } catch (err) {
      if (Date.now() > deadline || child.exitCode !== null) {
        child.kill('SIGKILL')
        throw new Error(`redis-server on port ${port} did not start: ${String(err)}`)
      }
      admin.disconnect()
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    admin,
    async stop() {
      admin.disconnect()
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGKILL')
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
