import { describe, expect, it } from 'vitest'
import { rowsOfBatch } from '../../shared/analytics/analytics-batch.js'
import { AnalyticsRecorder, MAX_NOT_FOUND_APIS, type VerifiedKey } from '../../shared/analytics/analytics-recorder.js'

const T = Date.UTC(2031, 0, 1, 10, 15)
const MINUTE = 60_000
const KEY_A: VerifiedKey = { id: 'key_a', apiId: 'api_1', ownerId: 'acme' }
const KEY_B: VerifiedKey = { id: 'key_b', apiId: 'api_1' }

/** The recorder's batch, taken and decoded as the ingest decodes it. */
function taken(recorder: AnalyticsRecorder) {
  const take = recorder.take()
  if (take === undefined) return undefined
  // Through JSON, as the buffer carries it.
  return { rows: take.rows, ...rowsOfBatch(JSON.parse(JSON.stringify(take.batch)), 'vr_0_1-0', 'ws') }
}

describe('AnalyticsRecorder', () => {
  it('lists the keys, tags and strings its rows name afresh in every batch', () => {
    const recorder = new AnalyticsRecorder('eu', 100)
    for (let round = 0; round < 3; round++) {
      // The same keys, tags and strings in every batch: each batch must list them itself.
      recorder.record(KEY_A, 'id_1', 'VALID', 'v1.verifyKey', T + round, 0, ['plan=pro'], 1)
      recorder.record(KEY_B, undefined, 'DISABLED', 'v2.verifyKey', T + round, 0, ['plan=free'], 1)
      recorder.record(KEY_A, 'id_1', 'VALID', 'v1.verifyKey', T + round, 0, ['plan=pro'], 1)
      recorder.recordRatelimit('api', 'user_1', true, 10, 9, T + round, 1)
      recorder.recordNotFound('api_1', 'v1.verifyKey', T + round)
      const batch = taken(recorder)!
      expect(batch.rows, `round ${round}`).toBe(5)
      expect(batch.verifications.map((row) => [row.key_id, row.identity_id, row.external_id, row.tags])).toEqual([
        ['key_a', 'id_1', 'acme', ['plan=pro']],
        ['key_b', '', '', ['plan=free']],
        ['key_a', 'id_1', 'acme', ['plan=pro']],
      ])
      expect(batch.ratelimits.map((row) => [row.namespace_name, row.identifier])).toEqual([['api', 'user_1']])
      // Each batch counts its own unknown keys, never the previous batch's again.
      expect(batch.notFound.map((row) => row.count)).toEqual([1])
    }
    expect(recorder.take()).toBeUndefined()
  })

  it('lists a key again when its api or identity changed within a batch, and tags as given', () => {
    const recorder = new AnalyticsRecorder('eu', 100)
    recorder.record(KEY_A, 'id_1', 'VALID', 'v1.verifyKey', T, 0, undefined, 1)
    recorder.record({ ...KEY_A, ownerId: 'globex' }, 'id_2', 'VALID', 'v1.verifyKey', T, 0, [], 1)
    recorder.record({ ...KEY_A, apiId: 'api_2', ownerId: 'globex' }, 'id_2', 'VALID', 'v1.verifyKey', T, 0, ['a'], 1)
    recorder.record(KEY_A, 'id_1', 'VALID', 'v1.verifyKey', T, 0, ['a', 'b'], 1)
    const batch = taken(recorder)!
    expect(batch.verifications.map((row) => [row.key_space_id, row.identity_id, row.external_id, row.tags])).toEqual([
      ['api_1', 'id_1', 'acme', []],
      ['api_1', 'id_2', 'globex', []],
      ['api_2', 'id_2', 'globex', ['a']],
      ['api_1', 'id_1', 'acme', ['a', 'b']],
    ])
  })

  it('tells tag lists apart whatever characters their tags hold', () => {
    const recorder = new AnalyticsRecorder('eu', 100)
    const lists = [['a\u0000b'], ['a', 'b'], ['a\u0000', 'b'], ['a', '\u0000b'], ['a', 'b', '']]
    for (const tags of lists) recorder.record(KEY_A, undefined, 'VALID', 'v1.verifyKey', T, 0, tags, 1)
    expect(taken(recorder)!.verifications.map((row) => row.tags)).toEqual(lists)
  })

  it('keeps each row’s time, outcome, source, credits and latency (µs in the batch, ms in the row)', () => {
    const recorder = new AnalyticsRecorder('eu-west', 100)
    recorder.record(KEY_A, undefined, 'USAGE_EXCEEDED', 'proxy', T + 5, 0, undefined, 1.5)
    recorder.record(KEY_A, undefined, 'VALID', 'authorize', T + 1_250, 7, undefined, 0.0123)
    recorder.recordRatelimit('api', 'user_1', false, 10, 0, T + 3_000, 2.25)
    const batch = taken(recorder)!
    expect(
      batch.verifications.map(({ time, outcome, source, spent_credits, latency, region }) => ({
        time,
        outcome,
        source,
        spent_credits,
        latency,
        region,
      })),
    ).toEqual([
      { time: T + 5, outcome: 'USAGE_EXCEEDED', source: 'proxy', spent_credits: 0, latency: 1.5, region: 'eu-west' },
      { time: T + 1_250, outcome: 'VALID', source: 'authorize', spent_credits: 7, latency: 0.012, region: 'eu-west' },
    ])
    expect(batch.ratelimits).toMatchObject([
      { time: T + 3_000, passed: false, limit: 10, remaining: 0, latency: 2.25, namespace_name: 'api' },
    ])
  })

  it('counts unknown keys per api, minute and source', () => {
    const recorder = new AnalyticsRecorder('eu', 100)
    recorder.recordNotFound('api_1', 'v1.verifyKey', T + 1)
    recorder.recordNotFound('api_1', 'v1.verifyKey', T + MINUTE - 1)
    recorder.recordNotFound('api_1', 'v2.verifyKey', T + 2)
    recorder.recordNotFound('api_1', 'v1.verifyKey', T + MINUTE)
    recorder.recordNotFound('api_2', 'v1.verifyKey', T + 3)
    recorder.recordNotFound(undefined, 'v1.verifyKey', T + 4)
    expect(recorder.size).toBe(5)
    const batch = taken(recorder)!
    expect(batch.rows).toBe(5)
    expect(batch.verifications).toEqual([])
    expect(batch.notFound.map((row) => [row.key_space_id, row.time, row.source, row.count])).toEqual([
      ['api_1', T / 1000, 'v1.verifyKey', 2],
      ['api_1', T / 1000, 'v2.verifyKey', 1],
      ['api_1', (T + MINUTE) / 1000, 'v1.verifyKey', 1],
      ['api_2', T / 1000, 'v1.verifyKey', 1],
      ['', T / 1000, 'v1.verifyKey', 1],
    ])
  })

  it(`counts unknown keys under at most ${MAX_NOT_FOUND_APIS} apis a batch, the others under none`, () => {
    const recorder = new AnalyticsRecorder('eu', 100_000)
    // A flood of guessed keys, each naming an api of its own.
    for (let i = 0; i < MAX_NOT_FOUND_APIS + 500; i++) recorder.recordNotFound(`api_guess_${i}`, 'v1.verifyKey', T)
    // An api counted already keeps its own counter.
    recorder.recordNotFound('api_guess_0', 'v1.verifyKey', T)
    const batch = taken(recorder)!
    expect(batch.notFound).toHaveLength(MAX_NOT_FOUND_APIS + 1)
    expect(batch.notFound.find((row) => row.key_space_id === '')?.count).toBe(500)
    expect(batch.notFound.find((row) => row.key_space_id === 'api_guess_0')?.count).toBe(2)
    // A new batch counts its own apis.
    recorder.recordNotFound('api_guess_1499', 'v1.verifyKey', T)
    expect(taken(recorder)!.notFound.map((row) => row.key_space_id)).toEqual(['api_guess_1499'])
  })

  it('holds at most maxRows rows between takes and counts the rest as dropped', () => {
    const recorder = new AnalyticsRecorder('eu', 3)
    recorder.record(KEY_A, undefined, 'VALID', 'v1.verifyKey', T, 0, undefined, 1)
    recorder.recordRatelimit('api', 'user_1', true, 10, 9, T, 1)
    recorder.record(KEY_B, undefined, 'VALID', 'v1.verifyKey', T, 0, undefined, 1)
    expect(recorder.dropped).toBe(0)
    recorder.record(KEY_B, undefined, 'VALID', 'v1.verifyKey', T, 0, undefined, 1)
    recorder.recordRatelimit('api', 'user_2', true, 10, 8, T, 1)
    expect(recorder.dropped).toBe(2)
    // Unknown keys: at most maxRows counters; a counter held keeps counting, a new one beyond is dropped.
    for (const api of ['api_1', 'api_2', 'api_3']) recorder.recordNotFound(api, 'v1.verifyKey', T)
    recorder.recordNotFound('api_4', 'v1.verifyKey', T)
    recorder.recordNotFound('api_1', 'v1.verifyKey', T)
    expect(recorder.dropped).toBe(3)
    const batch = taken(recorder)!
    expect(batch.verifications.map((row) => row.key_id)).toEqual(['key_a', 'key_b'])
    expect(batch.ratelimits.map((row) => row.identifier)).toEqual(['user_1'])
    expect(batch.notFound.map((row) => [row.key_space_id, row.count])).toEqual([
      ['api_1', 2],
      ['api_2', 1],
      ['api_3', 1],
    ])
    // Room again after a take; the drops are counted since the process started.
    recorder.record(KEY_B, undefined, 'VALID', 'v1.verifyKey', T, 0, undefined, 1)
    expect(taken(recorder)!.verifications).toHaveLength(1)
    expect(recorder.dropped).toBe(3)
  })
})
