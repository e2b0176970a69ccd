import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { docBlock } from '../support/doc-blocks.js'
import type { AnalyticsEngine } from '../../control-plane/analytics/engine/analytics-engine.js'
import { ensureAnalyticsSchema } from '../../control-plane/analytics/engine/analytics-tables.js'
import { QUOTA_NAMESPACE } from '../../control-plane/analytics/query/run-query.js'
import { QUERIES_PER_HOUR } from '../../control-plane/analytics/query/query-rules.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { ANALYTICS_ENGINES, type OpenedEngine } from '../support/analytics-engines.js'
import { openBackend, startTestControlPlane, TEST_ROOT_KEY, type Backend, type TestServer } from '../support/apps.js'

const DAY = 86_400_000

/**
 * analytics.getVerifications and analytics.getRatelimits on each engine, embedded and a server (its tables in a
 * database of their own): what a query may read (its root key's apis or namespaces, whatever the SQL says), what it
 * may be (one SELECT over the call's tables, allowed functions), and the limits, in the order Unkey's v2 checks them.
 * Rows are inserted into the engine as the ingest inserts them.
 */
describe.each(ANALYTICS_ENGINES)('v2 analytics queries on the $kind engine', (harness) => {
  let backend: Backend
  let plane: TestServer
  let bare: TestServer
  let opened: OpenedEngine
  let engine: AnalyticsEngine
  const now = Date.now()
  let apiA = ''
  let apiB = ''
  const rootKeys: Record<string, string> = {}

  const verification = (api: string, n: number, extra: object = {}) => ({
    request_id: `req_${api}_${n}`,
    time: now - n * 60_000,
    workspace_id: 'ws_keygate',
    key_space_id: api,
    identity_id: '',
    external_id: n % 2 === 0 ? 'acme' : '',
    key_id: `key_${api}_${n % 3}`,
    outcome: n % 4 === 0 ? 'RATE_LIMITED' : 'VALID',
    tags: [],
    source: 'v1.verifyKey',
    region: 'test',
    spent_credits: 0,
    latency: 0.5,
    ...extra,
  })
  const decision = (namespace: string, n: number) => ({
    request_id: `rl_${namespace}_${n}`,
    time: now - n * 60_000,
    workspace_id: 'ws_keygate',
    namespace_id: namespace,
    identifier: `user_${n % 2}`,
    passed: n % 3 !== 0,
    limit: 10,
    remaining: 5,
    latency: 0.1,
  })

  beforeAll(async () => {
    backend = await openBackend()
    opened = await harness.open()
    engine = opened.engine
    plane = await startTestControlPlane({ backend, analytics: { engine, holder: 'test' } })
    bare = await startTestControlPlane({ backend })
    apiA = (await call('/v2/apis.createApi', { name: 'api-a' })).body.data.apiId
    apiB = (await call('/v2/apis.createApi', { name: 'api-b' })).body.data.apiId
    await engine.insert(
      'key_verifications_v1',
      [
        ...Array.from({ length: 3 }, (_, n) => verification(apiA, n)),
        ...Array.from({ length: 5 }, (_, n) => verification(apiB, n)),
      ],
      'queries-v',
    )
    await engine.insert(
      'ratelimits_v1',
      [
        ...Array.from({ length: 4 }, (_, n) => decision('rlns_one', n)),
        ...Array.from({ length: 2 }, (_, n) => decision('rlns_two', n)),
      ],
      'queries-r',
    )
    for (const [name, permissions] of Object.entries({
      scopedA: [`api.${apiA}.read_analytics`],
      scopedUnknown: ['api.api_doesnotexist.read_analytics'],
      everyApi: ['api.*.read_analytics'],
      readKeyOnly: ['api.*.read_key'],
      namespaceOne: ['ratelimit.rlns_one.read_analytics'],
      everyNamespace: ['ratelimit.*.read_analytics'],
    })) {
      const made = await call('/v1/rootKeys.createRootKey', { name, permissions })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      rootKeys[name] = made.body.key
    }
  })
  afterAll(async () => {
    await plane?.close()
    await bare?.close()
    await backend?.close()
    await opened?.close()
  })

  async function call(url: string, payload: object, rootKey = TEST_ROOT_KEY, server?: TestServer) {
    const response = await (server ?? plane).app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
      payload,
    })
    return { status: response.statusCode, body: response.json() }
  }
  const verifications = (query: string, rootKey = rootKeys.everyApi!, server?: TestServer) =>
    call('/v2/analytics.getVerifications', { query }, rootKey, server)
  const ratelimits = (query: string, rootKey = rootKeys.everyNamespace!) =>
    call('/v2/analytics.getRatelimits', { query }, rootKey)
  /** A refusal's status, problem type (its last part) and detail. */
  const refusal = (answer: { status: number; body: any }) => ({
    status: answer.status,
    type: String(answer.body.error?.type ?? '')
      .split('/')
      .at(-1),
    detail: String(answer.body.error?.detail ?? ''),
  })

  it("runs the docs' example queries as written, and each counts what it says", async () => {
    const block = docBlock('docs/analytics.md', 'Querying', 'sql', [
      ["key_id = 'key_…'", `key_id = 'key_${apiA}_0'`],
      ["key_space_id = 'api_…'", `key_space_id = '${apiB}'`],
      ["external_id = 'user_…'", "external_id = 'acme'"],
    ])
    const queries = block.split(/\n\n/).map((query) => query.replace(/^--.*\n/, ''))
    expect(queries).toHaveLength(3)
    const answers = []
    for (const query of queries) {
      const answer = await verifications(query)
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      answers.push(answer.body.data as Record<string, unknown>[])
    }
    const [hourly, busiest, tagged] = answers
    // key_<apiA>_0: verification 0 of api A (rate limited, as every fourth is).
    expect(hourly!.map(({ outcome, n }) => ({ outcome, n }))).toEqual([{ outcome: 'RATE_LIMITED', n: 1 }])
    // Two keys tie at 2: in either order.
    expect(busiest!.map(({ n }) => n)).toEqual([2, 2, 1])
    expect([...busiest!].sort((a, b) => String(a.key_id).localeCompare(String(b.key_id)))).toEqual([
      { key_id: `key_${apiB}_0`, n: 2 },
      { key_id: `key_${apiB}_1`, n: 2 },
      { key_id: `key_${apiB}_2`, n: 1 },
    ])
    // No verification here carries tags: none by tag.
    expect(tagged).toEqual([])
  })

  it('answers the rows of a query, each an object of its columns, and [] for none', async () => {
    const answer = await verifications('SELECT count(*) AS count FROM key_verifications_v1')
    expect(answer.status).toBe(200)
    expect(answer.body.data).toEqual([{ count: 8 }])
    expect(answer.body.meta.requestId).toEqual(expect.any(String))
    expect((await verifications("SELECT key_id FROM key_verifications_v1 WHERE key_id = 'none'")).body.data).toEqual([])
    // Non-finite numbers are null.
    expect((await verifications('SELECT avg(latency) AS a FROM key_verifications_v1 WHERE 0')).body.data).toEqual([
      { a: null },
    ])
  })

  it('reads only the apis a scoped root key may read, whatever the SQL says', async () => {
    const scoped = rootKeys.scopedA!
    expect((await verifications('SELECT count(*) AS count FROM key_verifications_v1', scoped)).body.data).toEqual([
      { count: 3 },
    ])
    for (const query of [
      `SELECT count(*) AS count FROM key_verifications_v1 WHERE key_space_id = '${apiB}' OR 1 = 1`,
      'WITH all_rows AS (SELECT * FROM key_verifications_v1) SELECT count(*) AS count FROM all_rows',
      'SELECT count(*) AS count FROM (SELECT key_space_id FROM key_verifications_v1 AS inner_rows) AS outer_rows',
      'SELECT count(*) AS count FROM key_verifications_v1 AS a JOIN key_verifications_v1 AS b USING (request_id)',
      'SELECT (SELECT count(*) FROM key_verifications_v1) AS count',
      // The settings go after the query's last SELECT: the engine holds every SELECT before it to them too.
      'SELECT count(*) AS count FROM key_verifications_v1 EXCEPT SELECT 0',
      'SELECT count(*) AS count FROM key_verifications_v1 INTERSECT SELECT count(*) FROM key_verifications_v1',
      'SELECT (SELECT count(*) FROM key_verifications_v1) AS count EXCEPT (SELECT 0 UNION ALL SELECT 1)',
      '(SELECT count(*) AS count FROM key_verifications_v1 EXCEPT SELECT 0) UNION ALL (SELECT 0 EXCEPT SELECT 0)',
    ]) {
      const answer = await verifications(query, scoped)
      expect(answer.body.data, `${query}: ${JSON.stringify(answer.body)}`).toEqual([{ count: 3 }])
    }
    expect(
      (
        await verifications(
          'SELECT key_space_id FROM key_verifications_v1 UNION ALL SELECT key_space_id FROM key_verifications_v1',
          scoped,
        )
      ).body.data.every((row: { key_space_id: string }) => row.key_space_id === apiA),
    ).toBe(true)
    // Another api's rows are not there: 200 with nothing, never a 403.
    expect(
      (await verifications(`SELECT * FROM key_verifications_v1 WHERE key_space_id = '${apiB}'`, scoped)).body.data,
    ).toEqual([])
    // A permission on an api that does not exist reads nothing.
    const unknown = await verifications('SELECT count(*) AS count FROM key_verifications_v1', rootKeys.scopedUnknown)
    expect(unknown).toEqual({ status: 200, body: expect.objectContaining({ data: [{ count: 0 }] }) })
    // The rollups are scoped alike.
    expect(
      (await verifications('SELECT sum(count) AS count FROM key_verifications_per_hour_v1', scoped)).body.data,
    ).toEqual([{ count: 3 }])
  })

  it('reads ratelimits_v1 by namespace, scoped alike', async () => {
    expect((await ratelimits('SELECT count(*) AS n FROM ratelimits_v1')).body.data).toEqual([{ n: 6 }])
    expect((await ratelimits('SELECT count(*) AS n FROM ratelimits_v1', rootKeys.namespaceOne)).body.data).toEqual([
      { n: 4 },
    ])
    expect(
      (
        await ratelimits(
          'SELECT sum(passed) AS passed, sum(total) AS total FROM ratelimits_per_day_v1',
          rootKeys.namespaceOne,
        )
      ).body.data,
    ).toEqual([{ passed: 2, total: 4 }])
    expect(refusal(await ratelimits('SELECT count(*) FROM ratelimits_v1', rootKeys.everyApi))).toEqual({
      status: 403,
      type: 'insufficient_permissions',
      detail: "Missing permission: 'ratelimit.*.read_analytics'",
    })
    // Each call reads its own tables.
    expect(refusal(await ratelimits('SELECT count(*) FROM key_verifications_v1')).type).toBe('invalid_analytics_table')
  })

  it('never shows a row older than its table keeps, and refuses a bound before that', async () => {
    expect(
      (await verifications("SELECT count(*) AS n FROM key_verifications_v1 WHERE request_id = 'old'")).body.data,
    ).toEqual([{ n: 0 }])
    expect(
      (await verifications('SELECT count(*) AS n FROM key_verifications_v1 WHERE time >= now() - INTERVAL 60 DAY'))
        .status,
    ).toBe(200)
    for (const query of [
      'SELECT count(*) FROM key_verifications_v1 WHERE time >= now() - INTERVAL 120 DAY',
      `SELECT count(*) FROM key_verifications_v1 WHERE time > ${now - 100 * DAY}`,
      'SELECT count(*) FROM key_verifications_v1 WHERE toDateTime(now() - INTERVAL 100 DAY) <= time',
      'SELECT count(*) FROM key_verifications_v1 WHERE time BETWEEN now() - INTERVAL 100 DAY AND now()',
      // Before any day a date can name: still the contract's 400, never a 500.
      'SELECT count(*) FROM key_verifications_v1 WHERE time >= -9223372036854775808',
      'SELECT count(*) FROM key_verifications_v1 WHERE time > -8640000000000001',
    ]) {
      const answer = refusal(await verifications(query))
      expect(answer, query).toMatchObject({ status: 400, type: 'query_range_exceeds_retention' })
      expect(answer.detail).toContain('90 days')
    }
    // An upper bound, however old, is no lower bound.
    expect(
      (await verifications('SELECT count(*) AS n FROM key_verifications_v1 WHERE time <= now() - INTERVAL 400 DAY'))
        .status,
    ).toBe(200)
    // The monthly rollup keeps three years.
    expect(
      (
        await verifications(
          'SELECT sum(count) AS n FROM key_verifications_per_month_v1 WHERE time >= now() - INTERVAL 700 DAY',
        )
      ).status,
    ).toBe(200)
  })

  it.each([
    ['', 'invalid_analytics_query', 'No SQL statements found'],
    ['SELECT * FROM key_verifications_v1 WHERE invalid syntax here', 'invalid_analytics_query', 'Invalid SQL syntax'],
    [`SELECT ${'1 + '.repeat(5_000)}1 FROM key_verifications_v1`, 'invalid_analytics_query', 'maximum length'],
    ['SELECT nonexistent_column FROM key_verifications_v1', 'invalid_analytics_query', 'Unknown identifier'],
    ['SELECT 1; SELECT 2', 'invalid_analytics_query', 'exactly one statement'],
    ['SELECT count() FROM key_verifications_v1 SETTINGS max_threads = 1', 'invalid_analytics_query', 'SETTINGS'],
    ['SELECT count() FROM key_verifications_v1 FORMAT JSON', 'invalid_analytics_query', 'FORMAT'],
    ['SELECT count() FROM key_verifications_v1 WHERE key_id = {id:String}', 'invalid_analytics_query', 'parameters'],
    ['DELETE FROM key_verifications_v1 WHERE time < now()', 'invalid_analytics_query_type', 'Only SELECT'],
    ['DROP TABLE key_verifications_v1', 'invalid_analytics_query_type', 'Only SELECT'],
    ['SELECT * FROM system.tables', 'invalid_analytics_table', "'system.tables'"],
    ['SELECT * FROM default.key_verifications_v1', 'invalid_analytics_table', 'default.key_verifications_v1'],
    ['SELECT * FROM (SELECT * FROM system.one)', 'invalid_analytics_table', 'system.one'],
    ['SELECT * FROM ratelimits_v1', 'invalid_analytics_table', "'ratelimits_v1'"],
    [
      'SELECT * FROM key_verifications_per_minute_v1_mv',
      'invalid_analytics_table',
      'key_verifications_per_minute_v1_mv',
    ],
    // A CTE of the same name in a subquery passes the syntax's names, and not the tables the analyser resolves: a view
    // reads its rollup with no filter on it, and the other call's tables have none here.
    [
      'SELECT count() FROM key_verifications_per_minute_v1_mv WHERE 1 IN (WITH key_verifications_per_minute_v1_mv AS (SELECT 1 AS x) SELECT x FROM key_verifications_per_minute_v1_mv)',
      'invalid_analytics_table',
      'key_verifications_per_minute_v1_mv',
    ],
    [
      'SELECT count() FROM ratelimits_v1 WHERE 1 IN (WITH ratelimits_v1 AS (SELECT 1 AS x) SELECT x FROM ratelimits_v1)',
      'invalid_analytics_table',
      "'ratelimits_v1'",
    ],
    [
      'WITH key_verifications_per_hour_v1 AS (SELECT * FROM key_verifications_v1) SELECT * FROM key_verifications_per_hour_v1',
      'invalid_analytics_table',
      'conflicts',
    ],
    ["SELECT file('/etc/passwd') FROM key_verifications_v1", 'invalid_analytics_function', "'file'"],
    ['SELECT * FROM numbers(10)', 'invalid_analytics_function', "Table function 'numbers'"],
    ["SELECT * FROM url('http://127.0.0.1/', CSV)", 'invalid_analytics_function', 'url'],
    ["SELECT quantile(0.95)(file('x')) FROM key_verifications_v1", 'invalid_analytics_function', "'file'"],
    ["SELECT getSetting('readonly') FROM key_verifications_v1", 'invalid_analytics_function', 'getsetting'],
    // APPLY names its function apart from the calls the syntax tree lists: file() here would read the file.
    ["SELECT * APPLY(file) FROM (SELECT '/etc/hostname' AS path)", 'invalid_analytics_function', 'APPLY'],
    ["SELECT COLUMNS('key_id') APPLY(file) FROM key_verifications_v1", 'invalid_analytics_function', 'APPLY'],
    ['SELECT * APPLY(x -> toString(x)) FROM key_verifications_v1', 'invalid_analytics_function', 'APPLY'],
    [
      `SELECT ${Array.from({ length: 65 }, (_, i) => `${i} AS c${i}`).join(', ')} FROM key_verifications_v1`,
      'invalid_analytics_query',
      'too many columns',
    ],
    // A name that breaks EXPLAIN's line adds lines of its own to the tree checked: here, one that moves the columns
    // after it out of the query's list of them.
    [
      `SELECT 0 AS \`c\n  X\`, ${Array.from({ length: 65 }, (_, i) => `${i} AS c${i}`).join(', ')} FROM key_verifications_v1`,
      'invalid_analytics_query',
      'line breaks',
    ],
    // …and here one that moves a bound on `time` out of its comparison, past the retention check.
    [
      'SELECT count() FROM key_verifications_v1 WHERE time >= toUnixTimestamp64Milli(now64() - INTERVAL 120 DAY) + (SELECT 0 AS `z\n          W`)',
      'invalid_analytics_query',
      'line breaks',
    ],
    ['SELECT count() AS `n\\\\` FROM key_verifications_v1', 'invalid_analytics_query', 'backslashes'],
    [
      `SELECT count() FROM key_verifications_v1 WHERE ${Array.from({ length: 700 }, (_, i) => `key_id = 'k${i}'`).join(' OR ')}`,
      'invalid_analytics_query',
      'too complex',
    ],
  ])('refuses %j: %s', async (query, type, detail) => {
    const answer = refusal(await verifications(query))
    expect(answer).toMatchObject({ status: 400, type })
    expect(answer.detail).toContain(detail)
    // The detail never says what ran: no scoping, no settings.
    expect(answer.detail).not.toMatch(/additional_table_filters|readonly|SETTINGS max_execution/)
  })

  it('allows the ClickHouse a dashboard asks: CTEs, window functions, dates, count(DISTINCT), CASE', async () => {
    const answer = await verifications(`
      WITH per_key AS (
        SELECT key_id, countIf(outcome = 'VALID') AS valid, count(DISTINCT external_id) AS owners
        FROM key_verifications_v1
        WHERE time >= toUnixTimestamp64Milli(now64() - INTERVAL 7 DAY)
        GROUP BY key_id
      )
      SELECT key_id, valid, owners, rank() OVER (ORDER BY valid DESC, key_id) AS place,
        CASE WHEN valid > 1 THEN 'busy' ELSE 'quiet' END AS kind, toStartOfHour(now()) AS hour
      FROM per_key ORDER BY place LIMIT 3`)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body.data).toHaveLength(3)
    expect(answer.body.data[0]).toMatchObject({ place: 1, kind: expect.any(String) })
  })

  it('allows quoted names with spaces, and strings with line breaks and backslashes', async () => {
    const answer = await verifications(
      "SELECT count() AS \"all verifications\", 'a\\nb\\\\c' AS `the text` FROM key_verifications_v1 WHERE key_id != 'x\\ny'",
    )
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body.data).toEqual([{ 'all verifications': 8, 'the text': 'a\nb\\c' }])
  })

  it('allows comma joins and ARRAY JOIN, every table in them scoped', async () => {
    for (const [query, count] of [
      ['SELECT count() AS count FROM key_verifications_v1 AS a, key_verifications_v1 AS b', 9],
      ['SELECT count() AS count FROM key_verifications_v1 ARRAY JOIN [1, 2] AS x', 6],
      ['SELECT count() AS count FROM key_verifications_v1 AS a, key_verifications_v1 AS b ARRAY JOIN [1, 2] AS x', 18],
    ] as const) {
      const answer = await verifications(query, rootKeys.scopedA)
      expect(answer.body.data, `${query}: ${JSON.stringify(answer.body)}`).toEqual([{ count }])
    }
  })

  it('answers 422 for an answer over 4 MiB', async () => {
    const rows = Array.from({ length: 45_000 }, (_, n) =>
      verification(apiB, 1_000 + n, { request_id: `big_${n}_${'x'.repeat(90)}` }),
    )
    await engine.insert('key_verifications_v1', rows, 'queries-big')
    const answer = refusal(
      await verifications("SELECT request_id FROM key_verifications_v1 WHERE request_id LIKE 'big_%'"),
    )
    expect(answer).toMatchObject({ status: 422, type: 'query_memory_limit_exceeded' })
    // What the engine had written of that answer before it stopped is not the next query's.
    expect((await verifications('SELECT 1 AS one FROM key_verifications_v1 LIMIT 1')).body.data).toEqual([{ one: 1 }])
  })

  it('refuses with 403 before it looks for an engine, and 412 on a control plane without one', async () => {
    expect(refusal(await verifications('SELECT 1 FROM key_verifications_v1', rootKeys.readKeyOnly))).toEqual({
      status: 403,
      type: 'insufficient_permissions',
      detail: "Missing permission: 'api.*.read_analytics'",
    })
    expect(refusal(await verifications('SELECT 1 FROM key_verifications_v1', rootKeys.readKeyOnly, bare)).status).toBe(
      403,
    )
    expect(refusal(await verifications('not even SQL', rootKeys.everyApi, bare))).toMatchObject({
      status: 412,
      type: 'analytics_not_configured',
    })
    // A missing root key is v2's 400, an unknown one 401.
    const missing = await plane.app.inject({
      method: 'POST',
      url: '/v2/analytics.getVerifications',
      headers: { 'content-type': 'application/json' },
      payload: { query: 'SELECT 1' },
    })
    expect(missing.statusCode).toBe(400)
    expect((await verifications('SELECT 1', generateRootKey().key)).status).toBe(401)
  })

  it('counts a query refused by its analysis when the analysis ran its subqueries', async () => {
    const used = async () =>
      (
        await backend.store.counters.consumeNamespaceLimit(
          QUOTA_NAMESPACE,
          'workspace',
          QUERIES_PER_HOUR,
          3_600_000,
          0,
          Date.now(),
        )
      ).used
    const before = await used()
    const plain = await verifications('SELECT count() FROM key_verifications_v1 WHERE time >= now() - INTERVAL 120 DAY')
    expect(refusal(plain).type).toBe('query_range_exceeds_retention')
    expect(await used()).toBe(before)
    // The analysis ran the subquery to fold it into a constant, and the refusal says what it found: counted.
    const probing = await verifications(
      'SELECT count() FROM key_verifications_v1 WHERE time >= (SELECT min(time) FROM key_verifications_v1) - 200 * 86400000',
    )
    expect(refusal(probing).type).toBe('query_range_exceeds_retention')
    expect(await used()).toBe(before + 1)
  })

  it('answers 503 when the engine lacks a table a query reads (dropped, or on a replica without it), not a refusal', async () => {
    await engine.command('DROP TABLE key_verifications_per_month_v1')
    try {
      // A caller's query that names it, alone or beside a CTE: the engine's failure, not the query's.
      for (const query of [
        'SELECT sum(count) AS n FROM key_verifications_per_month_v1',
        'WITH k AS (SELECT 1 AS one) SELECT sum(count) AS n FROM key_verifications_per_month_v1, k',
      ])
        expect(refusal(await verifications(query)), query).toMatchObject({
          status: 503,
          type: 'analytics_connection_failed',
        })
      // Keygate's own report over it.
      const report = await plane.app.inject({
        method: 'GET',
        url: `/v1/analytics.getVerifications?apiId=${apiA}&start=${now - 40 * DAY}&groupBy=month`,
        headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
      })
      expect(report.statusCode, report.body).toBe(503)
      expect(report.json().error.code).toBe('UNAVAILABLE')
      // A name that is no table of the call is still the caller's.
      expect(refusal(await verifications('SELECT * FROM no_such_table')).status).toBe(400)
    } finally {
      await ensureAnalyticsSchema(engine)
    }
  })

  it('counts 1,000 queries an hour over both calls, then answers 429 until the hour turns', async () => {
    // The hour's count so far, as the store keeps it, taken to one short of the quota.
    const used = await backend.store.counters.consumeNamespaceLimit(
      QUOTA_NAMESPACE,
      'workspace',
      QUERIES_PER_HOUR,
      3_600_000,
      0,
      Date.now(),
    )
    const left = QUERIES_PER_HOUR - used.used - 1
    await backend.store.counters.consumeNamespaceLimit(
      QUOTA_NAMESPACE,
      'workspace',
      QUERIES_PER_HOUR,
      3_600_000,
      left,
      Date.now(),
    )
    const last = await ratelimits('SELECT count(*) FROM ratelimits_v1')
    expect(last.status, JSON.stringify(last.body)).toBe(200)
    expect(refusal(await verifications('SELECT count(*) FROM key_verifications_v1'))).toEqual({
      status: 429,
      type: 'query_quota_exceeded',
      detail: 'Query quota exceeded for the current time window. Please try again later.',
    })
    // A refused query counts nothing.
    expect(refusal(await verifications('SELECT * FROM system.tables')).status).toBe(400)
  })
})
