import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort } from './free-port.js'
import { waitFor } from './wait-for.js'

export interface SentinelProcess {
  port: number
  client: Redis
  stop(): Promise<void>
}

/** Starts a Redis Sentinel (the same redis-server binary) watching `masterPort` as `name`, quorum 2. */
export async function startSentinel(name: string, masterPort: number): Promise<SentinelProcess> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'keygate-sentinel-'))
  const conf = join(dir, 'sentinel.conf')
  writeFileSync(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${masterPort} 2`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 5000`,
      `sentinel parallel-syncs ${name} 1`,
    ].join('\n'),
  )
  const child: ChildProcess = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' })
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => 50,
  })
  client.on('error', () => {})
  await waitFor(
    async () => {
      await client.connect().catch(() => {})
      return (await client.ping()) === 'PONG'
    },
    `sentinel on ${port}`,
    10_000,
    50,
  )
  return {
    port,
    client,
    async stop() {
      client.disconnect()
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGKILL')
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
