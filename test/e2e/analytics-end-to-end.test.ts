import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runKeygate, startKeygate, type KeygateProcess } from '../support/processes.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

/** Past a verifier's hand-over (2 s) and a control plane's longest idle wait between ingest passes (16 s). */
const INGESTED_WITHIN_MS = 45_000

/**
 * Every verification counted once, through the processes users run: `keygate control-plane` on the embedded engine
 * and two `keygate verifier`s on one Redis. Each outcome a verifier answers, with tags, on both verifiers; then the
 * control plane killed while the verifiers keep answering, and started again on the same data: every table — raw and
 * rollups — holds each verification once, none lost. And a root key scoped to one api reads that api's rows only.
 */
describe('end to end: every verification counted once, across a control plane and two verifiers', () => {
  const redis = useRedisServer()
  const analyticsDir = mkdtempSync(join(tmpdir(), 'keygate-e2e-counted-'))
  let rootKey = ''
  let controlPlane: KeygateProcess
  const verifiers: KeygateProcess[] = []
  let apiId = ''
  let otherApiId = ''
  /** What each outcome (and each tag) should count in the api, as the test makes them. */
  const expected = new Map<string, number>()
  const expectedTags = new Map<string, number>()

  const startControlPlane = () => startKeygate(['control-plane'], { REDIS_URL: redis.url, ANALYTICS_DIR: analyticsDir })

  beforeAll(async () => {
    const created = await runKeygate(['root-key', 'create', '--permissions', '*', '--redis', redis.url])
    expect(created.code, created.stderr).toBe(0)
    rootKey = created.stdout.trim()
    controlPlane = await startControlPlane()
    for (let i = 0; i < 2; i++) verifiers.push(await startKeygate(['verifier'], { REDIS_URL: redis.url }))
    apiId = (await call('/v1/apis.createApi', { name: 'counted' })).body.apiId
    otherApiId = (await call('/v1/apis.createApi', { name: 'other' })).body.apiId
  }, 60_000)
  afterAll(async () => {
    for (const verifier of verifiers) await verifier.stop()
    await controlPlane?.stop()
    rmSync(analyticsDir, { recursive: true, force: true })
  })

  async function call(path: string, body: object, auth = rootKey) {
    const response = await fetch(`${controlPlane.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: response.status, body: (await response.json()) as Record<string, any> }
  }
  const createKey = async (fields: object = {}) =>
    (await call('/v1/keys.createKey', { apiId, ...fields })).body as { key: string; keyId: string }

  /** Verifies on a verifier and counts what it answered under the api (NOT_FOUND: counted per api, not per key). */
  async function verify(on: KeygateProcess, body: object, tags: string[]) {
    const answer = await fetch(`${on.url}/v1/keys.verifyKey`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, tags }),
    })
    const { code } = (await answer.json()) as { code: string }
    expected.set(code, (expected.get(code) ?? 0) + 1)
    if (code !== 'NOT_FOUND') for (const tag of tags) expectedTags.set(tag, (expectedTags.get(tag) ?? 0) + 1)
    return code
  }

  /** The keys of a round: made while the control plane runs, verified whether it does or not. */
  const roundKeys = async () => ({
    valid: await createKey(),
    credited: await createKey({ remaining: 1 }),
    disabled: await createKey({ enabled: false }),
    limited: await createKey({ ratelimit: { limit: 1, duration: 60_000, async: false } }),
    guarded: await createKey({ permissions: ['docs.read'] }),
  })

  /** One round of every outcome on each verifier. */
  async function everyOutcome(round: string, keys: Awaited<ReturnType<typeof roundKeys>>) {
    const { valid, credited, disabled, limited, guarded } = keys
    for (const [i, verifier] of verifiers.entries()) {
      const tags = [`round=${round}`, `verifier=${i}`]
      expect(await verify(verifier, { key: valid.key }, tags)).toBe('VALID')
      expect(await verify(verifier, { key: valid.key, apiId: otherApiId }, tags)).toBe('FORBIDDEN')
      expect(await verify(verifier, { key: disabled.key }, tags)).toBe('DISABLED')
      expect(await verify(verifier, { key: guarded.key, authorization: { permissions: 'docs.write' } }, tags)).toBe(
        'INSUFFICIENT_PERMISSIONS',
      )
      expect(await verify(verifier, { key: `unknown_${round}_${i}`, apiId }, tags)).toBe('NOT_FOUND')
    }
    expect(await verify(verifiers[0]!, { key: credited.key }, [`round=${round}`])).toBe('VALID')
    expect(await verify(verifiers[1]!, { key: credited.key }, [`round=${round}`])).toBe('USAGE_EXCEEDED')
    expect(await verify(verifiers[0]!, { key: limited.key }, [`round=${round}`])).toBe('VALID')
    expect(await verify(verifiers[0]!, { key: limited.key }, [`round=${round}`])).toBe('RATE_LIMITED')
  }

  const query = async (sql: string, auth = rootKey) => {
    const answer = await call('/v2/analytics.getVerifications', { query: sql }, auth)
    return answer.status === 200 ? (answer.body.data as Record<string, any>[]) : undefined
  }
  const byOutcome = (rows: Record<string, any>[] | undefined) =>
    sorted(Object.fromEntries((rows ?? []).map((row) => [row.outcome, Number(row.n)])))

  it('counts each outcome and tag of both verifiers once, through a control plane killed and started again', async () => {
    const [before, whileDown] = [await roundKeys(), await roundKeys()]
    await everyOutcome('before', before)
    // Killed: what it held is in Redis (the verifiers' buffers) or the engine; the verifiers answer on.
    await controlPlane.stop('SIGKILL')
    await everyOutcome('while-down', whileDown)
    controlPlane = await startControlPlane()

    const want = sorted(Object.fromEntries(expected))
    const wantFound = sorted(Object.fromEntries([...expected].filter(([code]) => code !== 'NOT_FOUND')))
    const raw = `SELECT outcome, count() AS n FROM key_verifications_v1 WHERE key_space_id = '${apiId}' GROUP BY outcome`
    const rolled = (period: string) =>
      `SELECT outcome, sum(count) AS n FROM key_verifications_per_${period}_v1 ` +
      `WHERE key_space_id = '${apiId}' GROUP BY outcome`
    await waitFor(
      async () => JSON.stringify(byOutcome(await query(rolled('minute')))) === JSON.stringify(want),
      'every verification of both verifiers in the minute rollup',
      INGESTED_WITHIN_MS,
      500,
    )
    // Every table holds each verification once: the raw one (unknown keys are counted in the rollups only) and
    // every rollup, after a kill mid-stream.
    expect(byOutcome(await query(raw))).toEqual(wantFound)
    for (const period of ['minute', 'hour', 'day', 'month'])
      expect(byOutcome(await query(rolled(period)))).toEqual(want)
    const tags = await query(
      `SELECT tag, count() AS n FROM key_verifications_v1 ARRAY JOIN tags AS tag ` +
        `WHERE key_space_id = '${apiId}' GROUP BY tag ORDER BY tag`,
    )
    expect(Object.fromEntries((tags ?? []).map((row) => [row.tag, Number(row.n)]))).toEqual(
      Object.fromEntries([...expectedTags].sort()),
    )
    // No row twice: each verification's id once.
    expect(
      await query(
        `SELECT count() AS n, uniqExact(request_id) AS ids FROM key_verifications_v1 WHERE key_space_id = '${apiId}'`,
      ),
    ).toEqual([
      {
        n: Object.values(wantFound).reduce((a, b) => a + b, 0),
        ids: Object.values(wantFound).reduce((a, b) => a + b, 0),
      },
    ])
  }, 120_000)

  it("lets a root key scoped to one api read that api's rows only, whatever the SQL", async () => {
    const other = await call('/v1/keys.createKey', { apiId: otherApiId })
    await verify(verifiers[0]!, { key: other.body.key }, ['other'])
    const scoped = await runKeygate([
      'root-key',
      'create',
      '--permissions',
      `api.${apiId}.read_analytics`,
      '--redis',
      redis.url,
    ])
    expect(scoped.code, scoped.stderr).toBe(0)
    const scopedKey = scoped.stdout.trim()
    await waitFor(
      async () =>
        ((await query(`SELECT count() AS n FROM key_verifications_v1 WHERE key_space_id = '${otherApiId}'`))?.[0]?.n ??
          0) > 0,
      "the other api's verification ingested",
      INGESTED_WITHIN_MS,
      500,
    )
    for (const sql of [
      'SELECT DISTINCT key_space_id FROM key_verifications_v1',
      `SELECT DISTINCT key_space_id FROM key_verifications_v1 WHERE key_space_id = '${otherApiId}'`,
      'SELECT DISTINCT key_space_id FROM (SELECT * FROM key_verifications_per_day_v1) UNION ALL SELECT DISTINCT key_space_id FROM key_verifications_per_hour_v1',
      'WITH all_rows AS (SELECT key_space_id FROM key_verifications_per_month_v1) SELECT DISTINCT key_space_id FROM all_rows',
    ]) {
      const rows = await query(sql, scopedKey)
      expect(rows, sql).toBeDefined()
      expect(new Set(rows!.map((row) => row.key_space_id)), sql).toEqual(
        new Set(sql.includes(`'${otherApiId}'`) ? [] : [apiId]),
      )
    }
  }, 90_000)
})

const sorted = (counts: Record<string, number>) =>
  Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)))
