import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll } from 'vitest'
import { freePort } from './free-port.js'

const SERVER = fileURLToPath(new URL('./clickhouse-http-server.mjs', import.meta.url))

export interface ClickhouseServerOptions {
  /** The one user it lets in (default `keygate`) and its password (default a password of the test's). */
  user?: string
  password?: string
  /** The database the URL names (default `keygate`: one the server does not have until the engine makes it). */
  database?: string
  /** The port to listen on (default a free one): a test may start a server where an engine already looks for one. */
  port?: number
}

export interface ClickhouseServer {
  /** `http://user:password@127.0.0.1:port/database`, as CLICKHOUSE_URL takes it. */
  url: string
  port: number
  user: string
  password: string
  /** Everything the process wrote so far. */
  output(): string
  stop(): Promise<void>
}

/**
 * ClickHouse's HTTP interface on 127.0.0.1, answered by chDB in a process of its own (test/support/
 * clickhouse-http-server.mjs: no ClickHouse server installs here, and chDB allows one data directory per process),
 * its data in a temporary directory removed when it stops.
 */
export async function startClickhouseServer(options: ClickhouseServerOptions = {}): Promise<ClickhouseServer> {
  const user = options.user ?? 'keygate'
  const password = options.password ?? 'ch-test-password-5e1f'
  const database = options.database ?? 'keygate'
  const port = options.port ?? (await freePort())
  const directory = await mkdtemp(join(tmpdir(), 'keygate-clickhouse-'))
  const child: ChildProcess = spawn(process.execPath, [SERVER, directory, String(port)], {
    env: { PATH: process.env.PATH ?? '', CLICKHOUSE_TEST_USER: user, CLICKHOUSE_TEST_PASSWORD: password },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stderr!.on('data', (chunk) => (output += String(chunk)))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      output += String(chunk)
      if (output.includes('"port"')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`the ClickHouse test server exited ${code}: ${output}`)))
  })
  return {
    url: `http://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`,
    port,
    user,
    password,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM')
        await exited
      }
      await rm(directory, { recursive: true, force: true })
    },
  }
}

/** One ClickHouse test server for a test file: started before its tests, stopped after. */
export function useClickhouseServer(options: ClickhouseServerOptions = {}): () => ClickhouseServer {
  let server: ClickhouseServer | undefined
  beforeAll(async () => {
    server = await startClickhouseServer(options)
  })
  afterAll(async () => {
    await server?.stop()
  })
  return () => {
    if (!server) throw new Error('the ClickHouse test server is not started yet: use it inside tests or hooks')
    return server
  }
}
