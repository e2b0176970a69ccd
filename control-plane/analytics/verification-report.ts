import { ANALYTICS_RETENTION_MS, BUCKET_MS, bucketStart, type Granularity } from '../../shared/analytics.js'
import { invalid } from '../../shared/errors/errors.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import type { UsageStore } from '../../shared/store/usage/usage-store.js'

/** A time slice of a report; months are summed from day buckets (the store keeps hours and days). */
export type Slice = 'hour' | 'day' | 'month'

export interface ReportQuery {
  keys: readonly KeyRecord[]
  start: number
  end: number
  /** Counts older than the retention are gone: the reads start there at the earliest. */
  now: number
  /** One row per slice, or (undefined) one sum over the whole range. */
  slice: Slice | undefined
  byKey: boolean
  /** By the key's owner (externalId); keys without one are left out, as Unkey leaves out keys without an identity. */
  byIdentity: boolean
  /**
   * Zero rows for the slices without counts (Unkey's fill): from start's slice up to, not including, end's (which
   * shows when it has counts); without slices, the one sum even when it is zero.
   */
  fill: boolean
}

export interface ReportRow {
  time?: number
  valid: number
  rateLimited: number
  usageExceeded: number
  /** Of the outcomes Keygate counts: valid + rateLimited + usageExceeded. */
  total: number
  keyId?: string
  identity?: { externalId: string }
}

/** Bucket reads one report may make (keys × buckets): about a second of Redis work at most. */
export const MAX_BUCKET_READS = 100_000
/** Slices in one answer, as keys.getVerifications allows buckets (the store reads at most this many per call). */
export const MAX_SLICES = 1_000
/** Keys read at once: enough to keep Redis busy, few enough to bound what is in flight. */
const KEYS_AT_ONCE = 20

interface Read {
  granularity: Granularity
  from: number
  to: number
}

/** Counts of the keys between start and end (inclusive of the buckets holding both), grouped as asked. */
export async function verificationReport(
  store: Pick<UsageStore, 'readUsage'>,
  query: ReportQuery,
): Promise<ReportRow[]> {
  const { slice, start, end } = query
  if (start > end) throw invalid('start', 'must not be after end')
  if (slice !== undefined && countSlices(slice, start, end) > MAX_SLICES)
    throw invalid('start', `at most ${MAX_SLICES} ${slice}s per request`)
  const kept = bucketStart('day', query.now - ANALYTICS_RETENTION_MS)
  const reads = end < kept ? [] : readsFor(slice, Math.max(start, kept), end)
  const cost = query.keys.length * reads.reduce((sum, read) => sum + bucketsIn(read), 0)
  if (cost > MAX_BUCKET_READS)
    throw invalid(
      'start',
      `${query.keys.length} keys over this range take ${cost} bucket reads (at most ${MAX_BUCKET_READS}): narrow the range, group by day, or filter by keyId or externalId`,
    )

  const rows = new Map<string, ReportRow>()
  const keys = query.byIdentity ? query.keys.filter((key) => key.ownerId !== undefined) : query.keys
  for (let i = 0; i < keys.length; i += KEYS_AT_ONCE) {
    await Promise.all(
      keys.slice(i, i + KEYS_AT_ONCE).map(async (key) => {
        for (const read of reads) {
          for (const bucket of await store.readUsage(key.id, read.granularity, read.from, read.to)) {
            const row = rowOf(rows, {
              time: slice === undefined ? undefined : sliceStart(slice, bucket.time),
              keyId: query.byKey ? key.id : undefined,
              identity: query.byIdentity ? { externalId: key.ownerId! } : undefined,
            })
            row.valid += bucket.success
            row.rateLimited += bucket.rateLimited
            row.usageExceeded += bucket.usageExceeded
            row.total += bucket.success + bucket.rateLimited + bucket.usageExceeded
          }
        }
      }),
    )
  }
  if (query.fill && slice === undefined) rowOf(rows, {})
  if (query.fill && slice !== undefined) {
    for (let t = sliceStart(slice, start); t < sliceStart(slice, end); t = nextSlice(slice, t)) rowOf(rows, { time: t })
  }
  return [...rows.values()].sort(byTimeThenGroup)
}

function rowOf(rows: Map<string, ReportRow>, group: Pick<ReportRow, 'time' | 'keyId' | 'identity'>): ReportRow {
  const id = JSON.stringify([group.time, group.keyId, group.identity?.externalId])
  let row = rows.get(id)
  if (!row) rows.set(id, (row = { ...group, valid: 0, rateLimited: 0, usageExceeded: 0, total: 0 }))
  return row
}

const byTimeThenGroup = (a: ReportRow, b: ReportRow) =>
  (a.time ?? 0) - (b.time ?? 0) ||
  (a.keyId ?? '').localeCompare(b.keyId ?? '') ||
  (a.identity?.externalId ?? '').localeCompare(b.identity?.externalId ?? '')

/**
 * The store reads covering [start, end]: hour buckets for hours, day buckets for days and months. For one sum over
 * the range, whole days come from day buckets and only the ragged edges from hours (a 30-day sum is ~78 reads per
 * key, not 720), counting exactly the hours from start's to end's.
 */
function readsFor(slice: Slice | undefined, start: number, end: number): Read[] {
  if (slice === 'hour') return [{ granularity: 'hour', from: start, to: end }]
  if (slice !== undefined) return [{ granularity: 'day', from: start, to: end }]
  const from = bucketStart('hour', start)
  const until = bucketStart('hour', end) + BUCKET_MS.hour
  const firstDay = Math.ceil(from / BUCKET_MS.day) * BUCKET_MS.day
  const daysEnd = Math.floor(until / BUCKET_MS.day) * BUCKET_MS.day
  if (firstDay >= daysEnd) return [{ granularity: 'hour', from, to: until - 1 }]
  return [
    { granularity: 'hour', from, to: firstDay - 1 },
    { granularity: 'day', from: firstDay, to: daysEnd - 1 },
    { granularity: 'hour', from: daysEnd, to: until - 1 },
  ]
}

const bucketsIn = (read: Read) =>
  Math.max(0, Math.floor((read.to - bucketStart(read.granularity, read.from)) / BUCKET_MS[read.granularity]) + 1)

function sliceStart(slice: Slice, ms: number): number {
  if (slice !== 'month') return bucketStart(slice, ms)
  const date = new Date(ms)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1)
}

function nextSlice(slice: Slice, time: number): number {
  if (slice !== 'month') return time + BUCKET_MS[slice]
  const date = new Date(time)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)
}

function countSlices(slice: Slice, start: number, end: number): number {
  if (slice !== 'month') return Math.floor((end - bucketStart(slice, start)) / BUCKET_MS[slice]) + 1
  const [from, to] = [new Date(start), new Date(end)]
  return (to.getUTCFullYear() - from.getUTCFullYear()) * 12 + to.getUTCMonth() - from.getUTCMonth() + 1
}
