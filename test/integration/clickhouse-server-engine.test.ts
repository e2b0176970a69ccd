import { inspect } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ApiError } from '../../shared/errors/errors.js'
import { ensureAnalyticsSchema, PUBLIC_TABLES } from '../../control-plane/analytics/engine/analytics-tables.js'
import { ClickhouseServerEngine } from '../../control-plane/analytics/engine/clickhouse-server-engine.js'
import { SchemaGatedEngine } from '../../control-plane/analytics/engine/schema-gated-engine.js'
import { engineErrorOf } from '../../control-plane/analytics/query/engine-errors.js'
import { capturedLogger } from '../support/apps.js'
import { startClickhouseServer, useClickhouseServer } from '../support/clickhouse-server.js'
import { freePort } from '../support/free-port.js'
import { waitFor } from '../support/wait-for.js'

/** Everything an error says: its text, its stack, its fields, and its causes'. */
function everythingSaidBy(err: unknown): string {
  const parts: string[] = []
  for (let at: unknown = err; at instanceof Error && parts.length < 30; at = at.cause)
    parts.push(String(at), at.stack ?? '', JSON.stringify(at))
  return parts.join('\n')
}

/** How an engine's failure reaches a caller of analytics.getVerifications: its status and problem. */
function callerSees(err: unknown) {
  const answer = engineErrorOf(err)
  expect(answer).toBeInstanceOf(ApiError)
  return { status: answer.statusCode, problem: answer.details?.problem }
}

/**
 * The server engine's own behaviour, on a ClickHouse test server (test/support/clickhouse-http-server.mjs): what its
 * failures say (never the password) and how callers see them, its bounded connections, its database made once, and
 * the test server itself refusing what a server refuses.
 */
describe('the ClickHouse server engine', () => {
  const server = useClickhouseServer({ password: 'pw-never-said-8c1d' })
  let engine: ClickhouseServerEngine
  beforeAll(async () => {
    engine = new ClickhouseServerEngine(server().url, { maxConnections: 2 })
    await engine.ensureDatabase()
    await ensureAnalyticsSchema(engine)
  })
  afterAll(async () => {
    await engine?.close()
  })

  it('names the server and database without the credentials', () => {
    expect(engine.address).toBe(`http://127.0.0.1:${server().port}/keygate`)
    expect(engine.address).not.toContain(server().password)
    // Nor does the engine itself, logged or serialised whole.
    expect(JSON.stringify(engine)).not.toContain(server().password)
    expect(inspect(engine, { depth: 10 })).not.toContain(server().password)
  })

  it('makes its database once: again, it finds it there', async () => {
    await engine.ensureDatabase()
    expect(await engine.query('SELECT currentDatabase() AS db')).toEqual([{ db: 'keygate' }])
    const tables = await engine.query('SELECT name FROM system.tables WHERE database = {db:String}', { db: 'keygate' })
    expect(tables.map((row) => row.name)).toEqual(expect.arrayContaining([...PUBLIC_TABLES]))
  })

  it('never says the password: refused, unreachable or too slow, and callers are told 503', async () => {
    const { password } = server()
    const failures: unknown[] = []
    const wrong = new ClickhouseServerEngine(server().url.replace(password, 'another-password-77'))
    const nowhere = new ClickhouseServerEngine(`http://keygate:${password}@127.0.0.1:${await freePort()}/keygate`)
    const slow = new ClickhouseServerEngine(server().url, { requestTimeoutMs: 200 })
    try {
      for (const call of [
        () => wrong.query('SELECT 1'),
        () => wrong.insert('key_verifications_v1', [{ request_id: 'x' }], 'b'),
        () => nowhere.query('SELECT 1'),
        () => nowhere.command('SELECT 1'),
        () => nowhere.ensureDatabase(),
        () => slow.query('SELECT sleep(1)'),
      ])
        failures.push(
          await call().then(
            () => 'no failure',
            (err: unknown) => err,
          ),
        )
    } finally {
      await wrong.close()
      await nowhere.close()
      await slow.close()
    }
    for (const err of failures) {
      expect(err).toBeInstanceOf(Error)
      const said = everythingSaidBy(err)
      expect(said).not.toContain(password)
      expect(said).not.toContain('another-password-77')
      expect(callerSees(err), said).toEqual({ status: 503, problem: 'data/analytics_connection_failed' })
    }
    expect(String(failures[0])).toMatch(/Authentication failed/)
    expect(String(failures[2])).toMatch(/ECONNREFUSED/)
    expect(String(failures[5])).toMatch(/Timeout/i)
  })

  it('gives the caller the query’s mistakes and limits as the embedded engine’s (400, 422)', async () => {
    const failed = (sql: string) =>
      engine.query(sql).then(
        () => undefined,
        (err: unknown) => err,
      )
    expect(callerSees(await failed('SELEC 1'))).toEqual({
      status: 400,
      problem: 'user/bad_request/invalid_analytics_query',
    })
    const tooMany = await failed(
      "SELECT number FROM numbers(10) SETTINGS max_result_rows = 1, result_overflow_mode = 'throw'",
    )
    expect(callerSees(tooMany)).toEqual({
      status: 422,
      problem: 'user/unprocessable_entity/query_rows_limit_exceeded',
    })
  })

  it('answers 503 when its database is missing (a server it may not use as configured)', async () => {
    const elsewhere = new ClickhouseServerEngine(server().url.replace(/\/keygate$/, '/nowhere'))
    try {
      const err = await elsewhere.query('SELECT 1').then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(String(err)).toMatch(/nowhere/)
      expect(callerSees(err).status).toBe(503)
    } finally {
      await elsewhere.close()
    }
  })

  it('asks for every answer whole: a failure past its first rows is an error, never a 200 with it in the body', async () => {
    // The test server answers so whatever is asked (chDB gives a result whole); a server, only when asked.
    await engine.insert('key_verifications_v1', [{ request_id: 'whole', time: Date.now() }], 'whole')
    await engine.query('SELECT 1 AS one')
    const requests = (await (await fetch(`http://127.0.0.1:${server().port}/keygate-test/requests`)).json()) as {
      statement: string
      settings: Record<string, string>
    }[]
    // Statements (the tables made), inserts and queries alike.
    expect(requests.map((request) => request.statement)).toEqual(expect.arrayContaining(['SELECT', 'CREATE', 'INSERT']))
    for (const request of requests)
      expect(request.settings, request.statement).toMatchObject({ wait_end_of_query: '1' })
  })

  it('opens at most maxConnections connections to the server', async () => {
    const own = await startClickhouseServer({ database: 'default' })
    const bounded = new ClickhouseServerEngine(own.url, { maxConnections: 2 })
    try {
      await Promise.all(Array.from({ length: 8 }, () => bounded.query('SELECT sleep(0.05) AS slept')))
      const seen = (await (await fetch(`http://127.0.0.1:${own.port}/keygate-test/connections`)).json()) as {
        most: number
      }
      // The test's own request for the count is one more.
      expect(seen.most).toBe(2 + 1)
    } finally {
      await bounded.close()
      await own.stop()
    }
  })
})

/** The test server answers as a ClickHouse server does for what the engine relies on: it refuses what one refuses. */
describe('the ClickHouse test server', () => {
  const server = useClickhouseServer({ password: 'server-side-pw' })
  const base = () => `http://127.0.0.1:${server().port}`
  const auth = () => ({ authorization: `Basic ${Buffer.from(`keygate:${server().password}`).toString('base64')}` })
  const post = (search: string, body: string, headers: Record<string, string> = auth()) =>
    fetch(`${base()}/?${search}`, { method: 'POST', headers, body })
  const failure = async (response: Response) => ({
    status: response.status,
    code: response.headers.get('x-clickhouse-exception-code'),
    body: await response.text(),
  })

  it('answers /ping, and a query with the headers the client reads', async () => {
    expect(await (await fetch(`${base()}/ping`)).text()).toBe('Ok.\n')
    const response = await post('default_format=JSONEachRow&query_id=q1', 'SELECT 1 AS one')
    expect(response.status).toBe(200)
    expect(response.headers.get('x-clickhouse-query-id')).toBe('q1')
    expect(JSON.parse(response.headers.get('x-clickhouse-summary')!)).toHaveProperty('read_rows')
    expect(await response.text()).toBe('{"one":1}\n')
  })

  it('refuses a wrong password or user (401, code 516), and two ways of saying who one is', async () => {
    const tries: Record<string, string>[] = [
      { authorization: `Basic ${Buffer.from('keygate:wrong').toString('base64')}` },
      { authorization: `Basic ${Buffer.from(`other:${server().password}`).toString('base64')}` },
      { 'x-clickhouse-user': 'keygate', 'x-clickhouse-key': 'wrong' },
      {},
    ]
    for (const headers of tries) {
      const answer = await failure(await post('', 'SELECT 1', headers))
      expect(answer).toMatchObject({ status: 401, code: '516' })
      expect(answer.body).toMatch(/^Code: 516\. DB::Exception: .*Authentication failed.*\(AUTHENTICATION_FAILED\)/)
    }
    expect(
      (await post('', 'SELECT 1', { 'x-clickhouse-user': 'keygate', 'x-clickhouse-key': server().password })).status,
    ).toBe(200)
    const both = await post(`user=keygate&password=${server().password}`, 'SELECT 1')
    expect(await failure(both)).toMatchObject({ code: '516' })
  })

  it('refuses several statements, an unknown setting, a missing database and a write over GET', async () => {
    expect(await failure(await post('', 'SELECT 1; SELECT 2'))).toMatchObject({
      status: 400,
      code: '62',
      body: expect.stringContaining('Multi-statements are not allowed'),
    })
    expect(await failure(await post('no_such_setting=1', 'SELECT 1'))).toMatchObject({ code: '115' })
    expect(await failure(await post('database=nowhere', 'SELECT 1'))).toMatchObject({ status: 404, code: '81' })
    const write = await fetch(`${base()}/?query=${encodeURIComponent('CREATE TABLE t (x Int8) ENGINE = Memory')}`, {
      headers: auth(),
    })
    expect(await failure(write)).toMatchObject({ code: '164' })
  })

  it('applies settings to the query alone, and binds parameters as a server reads them', async () => {
    const setting = async (search: string) =>
      (
        await (await post(`default_format=JSONEachRow&${search}`, "SELECT getSetting('max_threads') AS v")).text()
      ).trim()
    expect(await setting('max_threads=3')).toBe('{"v":3}')
    expect(await setting('')).not.toBe('{"v":3}')
    const bound = await post('default_format=JSONEachRow&param_text=a%5Ctb%5C%5Cc', 'SELECT {text:String} AS text')
    expect(await bound.json()).toEqual({ text: 'a\tb\\c' })
  })

  it("starts each request from its user's profile, and writes an insert not waited for after its answer", async () => {
    const read = async (search: string, sql: string) =>
      (await (await post(`default_format=JSONEachRow&${search}`, sql)).text()).trim()
    // The profile's opposite of what Keygate needs, until a request sets it.
    expect(await read('', 'SELECT toInt64(5) AS n')).toBe('{"n":"5"}')
    expect(await read('output_format_json_quote_64bit_integers=0', 'SELECT toInt64(5) AS n')).toBe('{"n":5}')
    expect(await read('', 'SELECT toInt64(5) AS n')).toBe('{"n":"5"}')
    expect((await post('', 'CREATE TABLE IF NOT EXISTS later (x Int8) ENGINE = MergeTree ORDER BY x')).status).toBe(200)
    const count = () => read('output_format_json_quote_64bit_integers=0', 'SELECT count() AS n FROM later')
    expect((await post('query=INSERT%20INTO%20later%20FORMAT%20JSONEachRow', '{"x":1}')).status).toBe(200)
    expect(await count()).toBe('{"n":0}')
    await waitFor(async () => (await count()) === '{"n":1}', 'the asynchronous insert to be written')
    expect((await post('async_insert=0&query=INSERT%20INTO%20later%20FORMAT%20JSONEachRow', '{"x":2}')).status).toBe(
      200,
    )
    expect(await count()).toBe('{"n":2}')
  })
})

/** The tables made in the background: a control plane starts while its server is down, and serves once it is up. */
describe('an engine whose server is down at start', () => {
  it('refuses every call as an unreachable engine until its tables are made, then serves', async () => {
    const port = await freePort()
    const password = 'late-server-pw-1'
    const captured = capturedLogger()
    const server = new ClickhouseServerEngine(`http://keygate:${password}@127.0.0.1:${port}/keygate`)
    const engine = new SchemaGatedEngine(
      server,
      async () => {
        await server.ensureDatabase()
        await ensureAnalyticsSchema(server)
      },
      captured.log,
    )
    const made = engine.start()
    let late: Awaited<ReturnType<typeof startClickhouseServer>> | undefined
    try {
      const refused = await engine.query('SELECT 1').then(
        () => undefined,
        (err: unknown) => err,
      )
      expect(callerSees(refused).status).toBe(503)
      await waitFor(() => captured.lines.some((line) => line.includes('could not be made yet')), 'a failed attempt')
      late = await startClickhouseServer({ port, password })
      await made
      expect(await engine.query('SELECT count() AS n FROM key_verifications_v1')).toEqual([{ n: 0 }])
      expect(captured.lines.join('\n')).not.toContain(password)
    } finally {
      await engine.close()
      await late?.stop()
    }
  }, 30_000)
})
