import { describe, expect, it } from 'vitest'
import {
  appendVerificationLines,
  readBatch,
  rowsOfBatch,
  VERIFICATION_COLUMNS,
  type EncodedBatch,
  type EncodedBatchV1,
} from '../../shared/analytics/analytics-batch.js'
import { PackedIntegersWriter } from '../../shared/analytics/packed-integers.js'

/**
 * A format-1 batch as a process of any version writes it: a buffer holds batches of the processes that were running
 * before an upgrade, so the format (outcomes and sources by index, each row's columns in order) reads the same in every
 * version. Reordering VERDICT_CODES or VERIFICATION_SOURCES would give old batches' rows other outcomes silently.
 */
const BATCH: EncodedBatchV1 = {
  f: 1,
  g: 'eu',
  t: 1_900_000_000_000,
  k: [
    ['key_a', 'api_1', 'id_1', 'acme'],
    ['key_b', 'api_1', '', ''],
  ],
  a: [['plan=pro']],
  v: [
    ...[0, 0, 0, 0, 0, -1, 100],
    ...[1, 1, 1, 1, 0, 0, 200],
    ...[2, 0, 2, 2, 0, -1, 300],
    ...[3, 0, 3, 3, 0, -1, 400],
    ...[4, 0, 4, 0, 0, -1, 500],
    ...[5, 0, 5, 0, 0, -1, 600],
    ...[6, 0, 6, 0, 0, -1, 700],
    ...[7, 0, 7, 0, 5, 0, 800],
  ],
  n: [['api_1', 1_899_999_960_000, 1, 4]],
  s: ['ns', 'user_1'],
  r: [10, 0, 1, 0, 3, 0, 1_500],
}

describe('analytics batches, format 1', () => {
  it('reads every outcome, source and column where format 1 put them', () => {
    const { verifications, notFound, ratelimits } = rowsOfBatch(BATCH, 'vr_3_1-0', 'ws')
    expect(verifications.map((row) => [row.time - BATCH.t, row.key_id, row.outcome, row.source])).toEqual([
      [0, 'key_a', 'NOT_FOUND', 'v1.verifyKey'],
      [1, 'key_b', 'DISABLED', 'v2.verifyKey'],
      [2, 'key_a', 'FORBIDDEN', 'authorize'],
      [3, 'key_a', 'EXPIRED', 'proxy'],
      [4, 'key_a', 'INSUFFICIENT_PERMISSIONS', 'v1.verifyKey'],
      [5, 'key_a', 'RATE_LIMITED', 'v1.verifyKey'],
      [6, 'key_a', 'USAGE_EXCEEDED', 'v1.verifyKey'],
      [7, 'key_a', 'VALID', 'v1.verifyKey'],
    ])
    expect(verifications[7]).toEqual({
      request_id: 'vr_3_1-0-7',
      time: BATCH.t + 7,
      workspace_id: 'ws',
      key_space_id: 'api_1',
      identity_id: 'id_1',
      external_id: 'acme',
      key_id: 'key_a',
      outcome: 'VALID',
      tags: ['plan=pro'],
      source: 'v1.verifyKey',
      region: 'eu',
      spent_credits: 5,
      latency: 0.8,
    })
    expect(notFound).toMatchObject([{ time: 1_899_999_960, key_space_id: 'api_1', source: 'v2.verifyKey', count: 4 }])
    expect(ratelimits).toEqual([
      {
        request_id: 'vr_3_1-0-r0',
        time: BATCH.t + 10,
        workspace_id: 'ws',
        namespace_name: 'ns',
        identifier: 'user_1',
        passed: false,
        limit: 3,
        remaining: 0,
        latency: 1.5,
      },
    ])
  })

  it('refuses a batch that names what it does not list, or of another format', () => {
    expect(() => rowsOfBatch({ ...BATCH, v: [0, 2, 0, 0, 0, -1, 1] }, 'x', 'ws')).toThrow(/does not list/)
    expect(() => rowsOfBatch({ ...BATCH, v: [0, 0, 8, 0, 0, -1, 1] }, 'x', 'ws')).toThrow(/does not list/)
    expect(() => rowsOfBatch({ ...BATCH, v: [0, 0, 0, 4, 0, -1, 1] }, 'x', 'ws')).toThrow(/does not list/)
    expect(() => rowsOfBatch({ ...BATCH, v: [0, 0, 0, 0, 0, 1, 1] }, 'x', 'ws')).toThrow(/does not list/)
    expect(() => rowsOfBatch({ ...BATCH, r: [0, 0, 2, 1, 1, 1, 1] }, 'x', 'ws')).toThrow(/does not list/)
    expect(() => rowsOfBatch({ ...BATCH, n: [['api_1', 0, 4, 1]] }, 'x', 'ws')).toThrow(/lacks/)
    expect(() => rowsOfBatch({ ...BATCH, f: 3 as 1 }, 'x', 'ws')).toThrow(/format 3/)
    // Format 2's rows are packed text: arrays under its number are no batch of it, nor text under format 1's.
    expect(() => rowsOfBatch({ ...BATCH, f: 2 as 1 }, 'x', 'ws')).toThrow(/format 2/)
    expect(() => rowsOfBatch({ ...BATCH, v: 'AAAA' as unknown as number[] }, 'x', 'ws')).toThrow(/format 1/)
  })

  it('refuses a damaged batch whole: rows ending part-way, values that are no numbers, no region or time', () => {
    const damaged = (batch: object) => () => readBatch(batch as EncodedBatchV1)
    expect(damaged({ ...BATCH, v: [...BATCH.v, 9] })).toThrow(/part-way/)
    expect(damaged({ ...BATCH, r: BATCH.r.slice(1) })).toThrow(/part-way/)
    // Written into the insert's text as they are, these would make a line the engine refuses.
    expect(damaged({ ...BATCH, v: [0, 0, 0, 0, '1,"x"', -1, 1] })).toThrow(/other than numbers/)
    expect(damaged({ ...BATCH, r: [0, 0, 1, 0, {}, 0, 1] })).toThrow(/other than numbers/)
    expect(damaged({ ...BATCH, g: undefined })).toThrow(/region, time or lists/)
    expect(damaged({ ...BATCH, t: '1900000000000' })).toThrow(/region, time or lists/)
    expect(damaged({ ...BATCH, s: undefined })).toThrow(/region, time or lists/)
    // null is what format 1's JSON made of a number that was not finite: read, as the column's default.
    const lines: string[] = []
    appendVerificationLines(readBatch({ ...BATCH, v: [0, 0, 0, 0, null, -1, 1] as number[] }), 'x', 'ws', lines)
    expect((JSON.parse(lines[0]!) as unknown[])[11]).toBeNull()
  })
})

const packed = (values: readonly number[]) => {
  const writer = new PackedIntegersWriter()
  for (const value of values) writer.write(value)
  return writer.take()
}

/** Format 1's batch as format 2 writes it: its rows packed. */
const PACKED: EncodedBatch = { ...BATCH, f: 2, v: packed(BATCH.v), r: packed(BATCH.r) }

describe('analytics batches, format 2', () => {
  it('reads as the same batch written as format 1 reads', () => {
    expect(readBatch(JSON.parse(JSON.stringify(PACKED)))).toEqual(readBatch(BATCH))
    expect(rowsOfBatch(PACKED, 'vr_3_1-0', 'ws')).toEqual(rowsOfBatch(BATCH, 'vr_3_1-0', 'ws'))
    expect(() => rowsOfBatch({ ...PACKED, v: BATCH.v as unknown as string }, 'x', 'ws')).toThrow(/format 2/)
    expect(() => rowsOfBatch({ ...PACKED, v: packed([0, 2, 0, 0, 0, -1, 1]) }, 'x', 'ws')).toThrow(/does not list/)
    // A value lost or gained (a continuation bit flipped) still reads as integers: the count gives it away.
    expect(() => rowsOfBatch({ ...PACKED, v: packed([...BATCH.v, 0]) }, 'x', 'ws')).toThrow(/part-way/)
    expect(() => rowsOfBatch({ ...PACKED, r: packed(BATCH.r.slice(0, -1)) }, 'x', 'ws')).toThrow(/part-way/)
    expect(() => rowsOfBatch({ ...PACKED, g: 7 as unknown as string }, 'x', 'ws')).toThrow(/region, time or lists/)
  })

  it("writes each verification's insert line as the JSON of its row's columns, whatever its strings hold", () => {
    const awkward: EncodedBatch = {
      ...PACKED,
      g: 'eu "west"\\\u2028',
      k: [
        ['key_"a"', 'api_1\n', 'id_ü', 'ac\u0000me'],
        ['key_b', 'api_1', '', ''],
      ],
      a: [['plan="pro"', '\ud83d\ude00', '\u2029']],
    }
    for (const batch of [BATCH, PACKED, awkward]) {
      const lines: string[] = []
      appendVerificationLines(readBatch(batch), 'vr_3_1-0', 'ws "x"', lines)
      const rows = rowsOfBatch(batch, 'vr_3_1-0', 'ws "x"').verifications
      // Ids as they are made in the buffers need no escaping; any other prefix is escaped all the same.
      const awkwardIds: string[] = []
      appendVerificationLines(readBatch(batch), 'vr_"\\\n', 'ws', awkwardIds)
      expect(awkwardIds.map((line) => (JSON.parse(line) as string[])[0])).toEqual(rows.map((_, i) => `vr_"\\\n-${i}`))
      expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual(
        rows.map((row) => VERIFICATION_COLUMNS.map((column) => row[column])),
      )
      expect(lines).toEqual(rows.map((row) => JSON.stringify(VERIFICATION_COLUMNS.map((column) => row[column]))))
    }
  })

  it('appends nothing of a batch with a row naming what it does not list', () => {
    const lines = ['earlier']
    const damaged = readBatch({ ...PACKED, v: packed([...BATCH.v, 0, 0, 0, 0, 0, 3, 1]) })
    expect(() => appendVerificationLines(damaged, 'x', 'ws', lines)).toThrow(/row 8 .*does not list/)
    expect(lines).toEqual(['earlier'])
  })
})
