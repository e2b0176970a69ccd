import { VERDICT_CODES, type VerdictCode } from '../verification/verification.js'
import { VERIFICATION_SOURCES, type VerificationSource } from '../verification/verification-source.js'
import { unpackIntegers } from './packed-integers.js'

/** Numbers a verification row takes in a batch's `v`. */
export const VERIFICATION_ROW_WIDTH = 7

/**
 * A batch of what a process recorded, as it travels from the process to the engine through the buffer: JSON, the
 * strings rows name listed once per batch, the rows themselves integers referring to them, packed (packed-integers.ts:
 * about ten bytes a verification).
 */
export interface EncodedBatch {
  /** Format version. */
  f: 2
  /** The recording process's region (its name). */
  g: string
  /** Unix ms every row's time is an offset from. */
  t: number
  /** The keys rows refer to: [keyId, apiId, identityId, externalId]. */
  k: [string, string, string, string][]
  /** The tag lists rows refer to. */
  a: string[][]
  /**
   * Verification rows, packed, VERIFICATION_ROW_WIDTH integers each: time offset (ms), key index, outcome (index in
   * VERDICT_CODES), source (index in VERIFICATION_SOURCES), credits spent, tags index (-1: none), latency (µs).
   */
  v: string
  /** Verifications of keys that do not exist, counted: [apiId, minute (Unix ms), source index, count]. */
  n: [string, number, number, number][]
  /** The namespaces and identifiers rate-limit rows refer to. */
  s: string[]
  /**
   * Rate-limit decisions, packed, RATELIMIT_ROW_WIDTH integers each: time offset (ms), namespace name (index in `s`),
   * identifier (index in `s`), passed (1 or 0), limit, remaining, latency (µs).
   */
  r: string
}

/**
 * Format 1: the same, but rows as JSON arrays of numbers. Still read: during a rolling upgrade, verifiers of the
 * version before write it, and batches of it may wait in the buffer.
 */
export interface EncodedBatchV1 extends Omit<EncodedBatch, 'f' | 'v' | 'r'> {
  f: 1
  v: number[]
  r: number[]
}

/** A batch read back, of either format: its rows' integers unpacked. */
export interface ReadBatch extends Omit<EncodedBatch, 'f' | 'v' | 'r'> {
  v: readonly number[]
  r: readonly number[]
}

/**
 * `encoded` (a batch's JSON, parsed) read back; an Error naming what is wrong if it is no batch this version reads, or
 * a damaged one. Its region, time and rows' numbers are written into the insert's text as they are
 * (appendVerificationLines): anything else there (a string, a missing field) would make a line the engine refuses,
 * and with it every batch of its buffer, for good. Rows ending part-way are damage too: packed rows that lost or
 * gained a value still read as numbers, every row after it misread.
 */
export function readBatch(encoded: EncodedBatch | EncodedBatchV1): ReadBatch {
  const { g, t, k, a, n, s } = encoded
  let v: readonly number[]
  let r: readonly number[]
  if (encoded.f === 2 && typeof encoded.v === 'string' && typeof encoded.r === 'string') {
    v = unpackIntegers(encoded.v)
    r = unpackIntegers(encoded.r)
  } else if (encoded.f === 1 && Array.isArray(encoded.v) && Array.isArray(encoded.r)) {
    // Numbers, or null: what format 1's JSON made of a number that was not finite (the column's default then).
    if (!encoded.v.every(isNumberOrNull) || !encoded.r.every(isNumberOrNull))
      throw new Error('analytics batch rows hold something other than numbers')
    v = encoded.v
    r = encoded.r
  } else throw new Error(`analytics batch of format ${String(encoded.f)}: this version reads formats 1 and 2`)
  if (typeof g !== 'string' || typeof t !== 'number' || ![k, a, n, s].every((list) => Array.isArray(list)))
    throw new Error('analytics batch lacks its region, time or lists')
  if (v.length % VERIFICATION_ROW_WIDTH !== 0 || r.length % RATELIMIT_ROW_WIDTH !== 0)
    throw new Error('analytics batch rows end part-way through a row')
  return { g, t, k, a, v, n, s, r }
}

const isNumberOrNull = (value: unknown): boolean => typeof value === 'number' || value === null

/** Numbers a rate-limit row takes in a batch's `r`. */
export const RATELIMIT_ROW_WIDTH = 7

/** A verification row as the engine's `key_verifications_v1` takes it (JSONEachRow). */
export interface VerificationRow {
  request_id: string
  time: number
  workspace_id: string
  key_space_id: string
  identity_id: string
  external_id: string
  key_id: string
  outcome: VerdictCode
  tags: string[]
  source: VerificationSource
  region: string
  spent_credits: number
  latency: number
}

/** The columns of `key_verifications_v1` a verification row fills, in the order verificationLines writes them. */
export const VERIFICATION_COLUMNS = [
  'request_id',
  'time',
  'workspace_id',
  'key_space_id',
  'identity_id',
  'external_id',
  'key_id',
  'outcome',
  'tags',
  'source',
  'region',
  'spent_credits',
  'latency',
] as const satisfies readonly (keyof VerificationRow)[]

/** Verifications of unknown keys counted per api and minute, as `key_verifications_per_minute_v1` takes them. */
export interface NotFoundCount {
  /** The minute's start, Unix seconds. */
  time: number
  workspace_id: string
  key_space_id: string
  identity_id: ''
  external_id: ''
  key_id: ''
  outcome: 'NOT_FOUND'
  tags: string[]
  source: VerificationSource
  region: string
  count: number
  spent_credits: 0
}

/** A rate-limit decision as `ratelimits_v1` takes it, but for its namespace's id (the ingest finds it by name). */
export interface RatelimitRow {
  request_id: string
  time: number
  workspace_id: string
  namespace_name: string
  identifier: string
  passed: boolean
  limit: number
  remaining: number
  latency: number
}

/**
 * The rows of a batch, each verification's `request_id` made from `idPrefix` (the batch's place in its buffer: the
 * same batch decoded again gives the same ids) and its index. Anything out of range in a batch (a newer format) is
 * refused whole, with an Error naming what.
 */
export function rowsOfBatch(
  batch: EncodedBatch | EncodedBatchV1,
  idPrefix: string,
  workspaceId: string,
): { verifications: VerificationRow[]; notFound: NotFoundCount[]; ratelimits: RatelimitRow[] } {
  const read = readBatch(batch)
  return {
    verifications: verificationRows(read, idPrefix, workspaceId),
    notFound: notFoundCounts(read, workspaceId),
    ratelimits: ratelimitRows(read, idPrefix, workspaceId),
  }
}

/** The verification rows of `encoded` (rowsOfBatch). */
function verificationRows(encoded: ReadBatch, idPrefix: string, workspaceId: string): VerificationRow[] {
  const verifications: VerificationRow[] = []
  const { v } = encoded
  for (let at = 0, i = 0; at + VERIFICATION_ROW_WIDTH <= v.length; at += VERIFICATION_ROW_WIDTH, i++) {
    const key = encoded.k[v[at + 1]!]
    const outcome = VERDICT_CODES[v[at + 2]!]
    const source = VERIFICATION_SOURCES[v[at + 3]!]
    const tagsAt = v[at + 5]!
    const tags = tagsAt < 0 ? [] : encoded.a[tagsAt]
    if (key === undefined || outcome === undefined || source === undefined || tags === undefined) {
      throw new Error(`analytics batch row ${i} refers to a key, outcome, source or tags it does not list`)
    }
    verifications.push({
      request_id: `${idPrefix}-${i}`,
      time: encoded.t + v[at]!,
      workspace_id: workspaceId,
      key_space_id: key[1],
      identity_id: key[2],
      external_id: key[3],
      key_id: key[0],
      outcome,
      tags,
      source,
      region: encoded.g,
      spent_credits: v[at + 4]!,
      latency: v[at + 6]! / 1000,
    })
  }
  return verifications
}

/** The counts of unknown keys `encoded` holds (rowsOfBatch). */
export function notFoundCounts(encoded: ReadBatch, workspaceId: string): NotFoundCount[] {
  return encoded.n.map(([apiId, minute, sourceAt, count]): NotFoundCount => {
    const source = VERIFICATION_SOURCES[sourceAt]
    if (source === undefined) throw new Error(`analytics batch names source ${sourceAt}, which this version lacks`)
    return {
      time: Math.floor(minute / 1000),
      workspace_id: workspaceId,
      key_space_id: apiId,
      identity_id: '',
      external_id: '',
      key_id: '',
      outcome: 'NOT_FOUND',
      tags: [],
      source,
      region: encoded.g,
      count,
      spent_credits: 0,
    }
  })
}

/** The rate-limit decisions of `encoded` (rowsOfBatch). */
export function ratelimitRows(encoded: ReadBatch, idPrefix: string, workspaceId: string): RatelimitRow[] {
  const ratelimits: RatelimitRow[] = []
  const { r, s } = encoded
  for (let at = 0, i = 0; at + RATELIMIT_ROW_WIDTH <= r.length; at += RATELIMIT_ROW_WIDTH, i++) {
    const namespace = s[r[at + 1]!]
    const identifier = s[r[at + 2]!]
    if (namespace === undefined || identifier === undefined) {
      throw new Error(`analytics batch rate-limit row ${i} refers to a string it does not list`)
    }
    ratelimits.push({
      request_id: `${idPrefix}-r${i}`,
      time: encoded.t + r[at]!,
      workspace_id: workspaceId,
      namespace_name: namespace,
      identifier,
      passed: r[at + 3] === 1,
      limit: r[at + 4]!,
      remaining: r[at + 5]!,
      latency: r[at + 6]! / 1000,
    })
  }
  return ratelimits
}

/**
 * The verification rows of `batch` as the engine's insert takes them — JSONCompactEachRow: a JSON array of each row's
 * values in VERIFICATION_COLUMNS' order, the rows rowsOfBatch makes — appended to `lines`. Written straight from the
 * batch's columns, each key's, tag list's and code's JSON made once per batch rather than an object made and
 * stringified per row: the ingest's largest cost in JavaScript. A row referring to what the batch does not list
 * throws, and then nothing of the batch is appended.
 */
export function appendVerificationLines(
  batch: ReadBatch,
  idPrefix: string,
  workspaceId: string,
  lines: string[],
): void {
  const keys = batch.k.map(([keyId, apiId, identityId, externalId]) =>
    JSON.stringify([workspaceId, apiId, identityId, externalId, keyId]).slice(1, -1),
  )
  const tagLists = batch.a.map((tags) => JSON.stringify(tags))
  const outcomes = VERDICT_CODES.map((code) => JSON.stringify(code))
  const region = JSON.stringify(batch.g)
  const sources = VERIFICATION_SOURCES.map((source) => `${JSON.stringify(source)},${region}`)
  // `["vr_…-` : each row's id is this and its index.
  const idStart = `[${JSON.stringify(`${idPrefix}-`).slice(0, -1)}`
  const { v, t } = batch
  const start = lines.length
  for (let at = 0, i = 0; at + VERIFICATION_ROW_WIDTH <= v.length; at += VERIFICATION_ROW_WIDTH, i++) {
    const key = keys[v[at + 1]!]
    const outcome = outcomes[v[at + 2]!]
    const source = sources[v[at + 3]!]
    const tagsAt = v[at + 5]!
    const tags = tagsAt < 0 ? '[]' : tagLists[tagsAt]
    if (key === undefined || outcome === undefined || source === undefined || tags === undefined) {
      lines.length = start
      throw new Error(`analytics batch row ${i} refers to a key, outcome, source or tags it does not list`)
    }
    lines.push(`${idStart}${i}",${t + v[at]!},${key},${outcome},${tags},${source},${v[at + 4]!},${v[at + 6]! / 1000}]`)
  }
}
