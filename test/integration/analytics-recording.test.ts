import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { Registry } from 'prom-client'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChdbEngine } from '../../control-plane/analytics/engine/chdb-engine.js'
import { ensureAnalyticsSchema } from '../../control-plane/analytics/engine/analytics-tables.js'
import { AnalyticsIngest } from '../../control-plane/analytics/ingest/analytics-ingest.js'
import { rowsOfBatch, type EncodedBatch, type VerificationRow } from '../../shared/analytics/analytics-batch.js'
import {
  ANALYTICS_BUFFER_SHARDS,
  type AnalyticsBufferStore,
} from '../../shared/store/analytics-buffer/analytics-buffer-store.js'
import { createReverseProxy, type ReverseProxy } from '../../verifier/proxy-server.js'
import { namespaceAddress, type NamespaceRecord } from '../../shared/ratelimits/ratelimit-namespace.js'
import {
  openBackend,
  startTestControlPlane,
  startTestVerifier,
  TEST_ROOT_KEY,
  type Backend,
  type TestServer,
} from '../support/apps.js'
import { startEchoUpstream, type EchoUpstream } from '../support/echo-upstream.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'

const ADMIN = { authorization: `Bearer ${TEST_ROOT_KEY}`, 'content-type': 'application/json' }

/**
 * Every verification recorded, from each path a verifier answers on, through the store's buffer into the embedded
 * engine: the rows the buffer holds (decoded as the ingest decodes them), then the tables they end in.
 */
describe('analytics: every verification recorded and ingested', () => {
  let redis: RedisServer
  let backend: Backend
  let controlPlane: TestServer
  let verifier: TestServer
  let upstream: EchoUpstream
  let proxy: ReverseProxy
  let engine: ChdbEngine
  const directory = mkdtempSync(join(tmpdir(), 'keygate-recording-'))
  let verifierUrl = ''
  let proxyUrl = ''
  let apiId = ''
  let otherApiId = ''

  beforeAll(async () => {
    redis = await startRedisServer()
    backend = await openBackend(redis.url)
    controlPlane = await startTestControlPlane({ backend })
    // It hands rows over only when the test says so.
    verifier = await startTestVerifier({ backend, gateway: { anyApi: true }, recording: { flushMs: 3_600_000 } })
    verifierUrl = await verifier.app.listen({ port: 0, host: '127.0.0.1' })
    apiId = (await post('apis.createApi', { name: 'recorded' })).apiId
    otherApiId = (await post('apis.createApi', { name: 'other' })).apiId
    upstream = await startEchoUpstream()
    proxy = createReverseProxy({
      verifier: verifier.verifier,
      policy: { keyHeader: 'x-api-key', cost: 1, apiId },
      log: pino({ level: 'silent' }),
      registry: new Registry(),
      options: { upstreamUrl: upstream.url, connections: 2, timeoutMs: 5_000, docsBaseUrl: '/docs' },
    })
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve))
    const address = proxy.server.address()
    proxyUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    engine = new ChdbEngine(directory)
    await ensureAnalyticsSchema(engine)
  })
  afterAll(async () => {
    await proxy?.close()
    await upstream?.stop()
    await verifier?.close()
    await controlPlane?.close()
    await backend?.close()
    await redis?.stop()
    await engine?.close()
    rmSync(directory, { recursive: true, force: true })
  })

  async function post(path: string, payload: object): Promise<any> {
    const response = await controlPlane.app.inject({ method: 'POST', url: `/v1/${path}`, headers: ADMIN, payload })
    expect(response.statusCode, response.body).toBe(200)
    return response.json()
  }
  const verifyV1 = async (body: object) =>
    (await request(`${verifierUrl}/v1/keys.verifyKey`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.body.json())) as { code: string }
  const verifyV2 = async (body: object) =>
    (await request(`${verifierUrl}/v2/keys.verifyKey`, {
      method: 'POST',
      headers: ADMIN,
      body: JSON.stringify(body),
    }).then((r) => r.body.json())) as { data: { code: string } }
  const authorize = async (key: string) =>
    (await request(`${verifierUrl}/v1/authorize`, { headers: { 'x-api-key': key } })).statusCode
  const throughProxy = async (key: string) =>
    request(`${proxyUrl}/orders`, { headers: { 'x-api-key': key } }).then(async (r) => {
      await r.body.dump()
      return r.statusCode
    })

  /** An ingest from `buffer` into the file's engine, as a control plane makes it. */
  const ingestOf = (buffer: AnalyticsBufferStore) =>
    new AnalyticsIngest({
      buffer,
      engine,
      log: pino({ level: 'silent' }),
      registry: new Registry(),
      holder: 'test',
      namespaceIdOf: async (name) =>
        (await backend.store.entities.getEntity<NamespaceRecord>(namespaceAddress(name)))?.doc.id,
    })

  /** Every batch the buffers hold, decoded as the ingest decodes them, and the buffer and id of each. */
  async function buffered(buffer: AnalyticsBufferStore) {
    const verifications: VerificationRow[] = []
    const notFound: ReturnType<typeof rowsOfBatch>['notFound'] = []
    const ratelimits: ReturnType<typeof rowsOfBatch>['ratelimits'] = []
    for (let shard = 0; shard < ANALYTICS_BUFFER_SHARDS; shard++) {
      for (const { id, batch } of (await buffer.look(shard, 1_000)).batches) {
        const rows = rowsOfBatch(JSON.parse(batch) as EncodedBatch, `vr_${shard}_${id}`, 'ws_keygate')
        verifications.push(...rows.verifications)
        notFound.push(...rows.notFound)
        ratelimits.push(...rows.ratelimits)
      }
    }
    return { verifications, notFound, ratelimits }
  }

  it('records each outcome on every path, with its key, identity, tags and credits, and counts unknown keys', async () => {
    await post('identities.createIdentity', { externalId: 'acme' })
    const valid = await post('keys.createKey', { apiId, externalId: 'acme' })
    const disabled = await post('keys.createKey', { apiId, enabled: false })
    const credited = await post('keys.createKey', { apiId, remaining: 1 })
    const limited = await post('keys.createKey', {
      apiId,
      ratelimit: { async: false, limit: 1, duration: 60_000 },
    })
    const before = Date.now()
    expect((await verifyV1({ key: valid.key, apiId, tags: ['path=/a', 'plan=pro'] })).code).toBe('VALID')
    expect((await verifyV1({ key: valid.key, apiId: otherApiId })).code).toBe('FORBIDDEN')
    expect((await verifyV1({ key: valid.key, authorization: { permissions: 'admin' } })).code).toBe(
      'INSUFFICIENT_PERMISSIONS',
    )
    expect((await verifyV1({ key: disabled.key })).code).toBe('DISABLED')
    expect((await verifyV1({ key: credited.key, remaining: { cost: 1 } })).code).toBe('VALID')
    expect((await verifyV1({ key: credited.key })).code).toBe('USAGE_EXCEEDED')
    expect((await verifyV1({ key: limited.key })).code).toBe('VALID')
    expect((await verifyV1({ key: limited.key })).code).toBe('RATE_LIMITED')
    expect((await verifyV2({ key: valid.key, tags: ['v2'] })).data.code).toBe('VALID')
    expect(await authorize(valid.key)).toBe(200)
    expect(await throughProxy(valid.key)).toBe(200)
    // Guesses: counted per api and minute, never a row each.
    for (let i = 0; i < 5; i++) expect((await verifyV1({ key: `sk_guess${i}`, apiId })).code).toBe('NOT_FOUND')
    expect((await verifyV2({ key: 'sk_guess' })).data.code).toBe('NOT_FOUND')
    // Rate-limit decisions: on the verifier (a namespace without a record) and on the control plane (made by its use).
    const limit = { identifier: 'user_1', limit: 1, duration: 60_000 }
    for (const passed of [true, false]) {
      const answer = await request(`${verifierUrl}/v1/ratelimits.limit`, {
        method: 'POST',
        headers: ADMIN,
        body: JSON.stringify({ namespace: 'unmade', ...limit }),
      }).then((r) => r.body.json() as Promise<{ success: boolean }>)
      expect(answer.success).toBe(passed)
    }
    const made = await controlPlane.app.inject({
      method: 'POST',
      url: '/v2/ratelimit.limit',
      headers: ADMIN,
      payload: { namespace: 'made', ...limit },
    })
    expect(made.json().data.success, made.body).toBe(true)
    const after = Date.now()

    await verifier.verifier.flushAnalytics()
    await controlPlane.verifier.flushAnalytics()
    const { verifications, notFound, ratelimits } = await buffered(backend.store.analyticsBuffer)
    const summary = verifications.map((row) => [row.key_id, row.outcome, row.source])
    expect(summary).toEqual([
      [valid.keyId, 'VALID', 'v1.verifyKey'],
      [valid.keyId, 'FORBIDDEN', 'v1.verifyKey'],
      [valid.keyId, 'INSUFFICIENT_PERMISSIONS', 'v1.verifyKey'],
      [disabled.keyId, 'DISABLED', 'v1.verifyKey'],
      [credited.keyId, 'VALID', 'v1.verifyKey'],
      [credited.keyId, 'USAGE_EXCEEDED', 'v1.verifyKey'],
      [limited.keyId, 'VALID', 'v1.verifyKey'],
      [limited.keyId, 'RATE_LIMITED', 'v1.verifyKey'],
      [valid.keyId, 'VALID', 'v2.verifyKey'],
      [valid.keyId, 'VALID', 'authorize'],
      [valid.keyId, 'VALID', 'proxy'],
    ])
    const first = verifications[0]!
    expect(first).toMatchObject({
      workspace_id: 'ws_keygate',
      key_space_id: apiId,
      external_id: 'acme',
      tags: ['path=/a', 'plan=pro'],
      spent_credits: 0,
    })
    expect(first.identity_id).toMatch(/^id_/)
    expect(verifications[8]!.tags).toEqual(['v2'])
    expect(verifications[3]!).toMatchObject({ identity_id: '', external_id: '' })
    // Credits spent only by the verification that spent them (the others' keys carry none, or it ran out).
    expect(verifications.map((row) => row.spent_credits)).toEqual([0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0])
    for (const row of verifications) {
      expect(row.time).toBeGreaterThanOrEqual(before)
      expect(row.time).toBeLessThanOrEqual(after)
      expect(row.latency).toBeGreaterThanOrEqual(0)
      expect(row.region).not.toBe('')
    }
    expect(new Set(verifications.map((row) => row.request_id)).size).toBe(verifications.length)
    expect(notFound.map((row) => [row.key_space_id, row.source, row.count]).sort()).toEqual(
      [
        [apiId, 'v1.verifyKey', 5],
        ['', 'v2.verifyKey', 1],
      ].sort(),
    )
    expect(
      ratelimits
        .map((row) => [row.namespace_name, row.identifier, row.passed, row.limit, row.remaining])
        .sort((a, b) => String(a).localeCompare(String(b))),
    ).toEqual([
      ['made', 'user_1', true, 1, 0],
      ['unmade', 'user_1', false, 1, 0],
      ['unmade', 'user_1', true, 1, 0],
    ])
  })

  it('ingests the buffers into the engine, the unknown keys into the rollups only, and empties them', async () => {
    const ingest = ingestOf(backend.store.analyticsBuffer)
    expect(await ingest.ingestNow()).toBe(true)
    const rows = async (sql: string) => engine.query(sql)
    const where = `key_space_id = '${apiId}'`
    expect(
      await rows(
        `SELECT outcome, count() AS n FROM key_verifications_v1 WHERE ${where} GROUP BY outcome ORDER BY outcome`,
      ),
    ).toEqual([
      { outcome: 'DISABLED', n: 1 },
      { outcome: 'FORBIDDEN', n: 1 },
      { outcome: 'INSUFFICIENT_PERMISSIONS', n: 1 },
      { outcome: 'RATE_LIMITED', n: 1 },
      { outcome: 'USAGE_EXCEEDED', n: 1 },
      { outcome: 'VALID', n: 6 },
    ])
    for (const period of ['minute', 'hour', 'day', 'month']) {
      expect(
        await rows(
          `SELECT outcome, sum(count) AS n FROM key_verifications_per_${period}_v1 WHERE ${where} AND outcome IN ('VALID', 'NOT_FOUND') GROUP BY outcome ORDER BY outcome`,
        ),
        period,
      ).toEqual([
        { outcome: 'NOT_FOUND', n: 5 },
        { outcome: 'VALID', n: 6 },
      ])
    }
    expect(await rows(`SELECT count() AS n FROM key_verifications_v1 WHERE outcome = 'NOT_FOUND'`)).toEqual([{ n: 0 }])
    // Each decision under its namespace's id: the made one's, and '' for one that has no record.
    const madeId = (await backend.store.entities.getEntity<NamespaceRecord>(namespaceAddress('made')))!.doc.id
    expect(
      await rows(
        'SELECT namespace_id, identifier, passed, `limit`, remaining FROM ratelimits_v1 ORDER BY namespace_id, passed',
      ),
    ).toEqual([
      { namespace_id: '', identifier: 'user_1', passed: false, limit: 1, remaining: 0 },
      { namespace_id: '', identifier: 'user_1', passed: true, limit: 1, remaining: 0 },
      { namespace_id: madeId, identifier: 'user_1', passed: true, limit: 1, remaining: 0 },
    ])
    for (const period of ['minute', 'hour', 'day', 'month']) {
      expect(
        await rows(`SELECT sum(passed) AS passed, sum(total) AS total FROM ratelimits_per_${period}_v1`),
        period,
      ).toEqual([{ passed: 2, total: 3 }])
    }
    const left = await buffered(backend.store.analyticsBuffer)
    expect(left.verifications).toEqual([])
    expect(left.notFound).toEqual([])
    // Nothing more to ingest: the next pass finds nothing.
    expect(await ingest.ingestNow()).toBe(false)
  })

  it('inserts batches again after a pass died before completing them, and counts them once everywhere', async () => {
    const key = await post('keys.createKey', { apiId: otherApiId })
    for (let i = 0; i < 7; i++) expect((await verifyV1({ key: key.key })).code).toBe('VALID')
    for (let i = 0; i < 3; i++) await verifyV1({ key: `sk_guess${i}`, apiId: otherApiId })
    await verifier.verifier.flushAnalytics()
    const buffer = backend.store.analyticsBuffer
    let failures = 1
    const dying: AnalyticsBufferStore = {
      ...buffer,
      append: buffer.append.bind(buffer),
      look: buffer.look.bind(buffer),
      take: buffer.take.bind(buffer),
      holdLease: buffer.holdLease.bind(buffer),
      releaseLease: buffer.releaseLease.bind(buffer),
      reportThrough: buffer.reportThrough.bind(buffer),
      forgetProcesses: buffer.forgetProcesses.bind(buffer),
      readReports: buffer.readReports.bind(buffer),
      readMark: buffer.readMark.bind(buffer),
      raiseMark: buffer.raiseMark.bind(buffer),
      // The pass dies after the engine took the rows, before the store heard of it.
      complete: async (shard, last) => {
        if (failures-- > 0) throw new Error('died before completing')
        return buffer.complete(shard, last)
      },
    }
    const ingest = ingestOf(dying)
    await expect(ingest.ingestNow()).rejects.toThrow('died before completing')
    expect(await ingest.ingestNow()).toBe(true)
    const where = `key_space_id = '${otherApiId}'`
    expect(await engine.query(`SELECT count() AS n FROM key_verifications_v1 WHERE ${where}`)).toEqual([{ n: 7 }])
    for (const period of ['minute', 'hour', 'day', 'month']) {
      expect(
        await engine.query(
          `SELECT outcome, sum(count) AS n FROM key_verifications_per_${period}_v1 WHERE ${where} GROUP BY outcome ORDER BY outcome`,
        ),
        period,
      ).toEqual([
        { outcome: 'NOT_FOUND', n: 3 },
        { outcome: 'VALID', n: 7 },
      ])
    }
  })
  it('records a multiLimit all or nothing, and the credits each verification spent', async () => {
    const multiLimit = async (limits: object[]) => {
      const response = await controlPlane.app.inject({
        method: 'POST',
        url: '/v2/ratelimit.multiLimit',
        headers: ADMIN,
        payload: limits,
      })
      expect(response.statusCode, response.body).toBe(200)
      return response.json().data.passed as boolean
    }
    const roomy = { namespace: 'multi', identifier: 'roomy', limit: 10, duration: 60_000 }
    const tight = { namespace: 'multi', identifier: 'tight', limit: 1, duration: 60_000 }
    expect(await multiLimit([roomy, tight])).toBe(true)
    // The tight window is full: neither limit passes, though the roomy one had room.
    expect(await multiLimit([roomy, tight])).toBe(false)
    const credited = await post('keys.createKey', { apiId, remaining: 10 })
    expect((await verifyV1({ key: credited.key, remaining: { cost: 3 } })).code).toBe('VALID')
    expect((await verifyV2({ key: credited.key, credits: { cost: 2 } })).data.code).toBe('VALID')
    expect((await verifyV1({ key: credited.key, remaining: { cost: 6 } })).code).toBe('USAGE_EXCEEDED')
    await verifier.verifier.flushAnalytics()
    await controlPlane.verifier.flushAnalytics()
    const { verifications, ratelimits } = await buffered(backend.store.analyticsBuffer)
    expect(ratelimits.map((row) => [row.identifier, row.passed])).toEqual([
      ['roomy', true],
      ['tight', true],
      ['roomy', false],
      ['tight', false],
    ])
    expect(verifications.map((row) => [row.outcome, row.spent_credits])).toEqual([
      ['VALID', 3],
      ['VALID', 2],
      ['USAGE_EXCEEDED', 0],
    ])
  })
})
