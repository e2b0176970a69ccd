import { VERDICT_CODES, type VerdictCode } from '../verification/verification.js'
import { VERIFICATION_SOURCES, type VerificationSource } from '../verification/verification-source.js'

/** Numbers a verification row takes in a batch's `v`. */
export const VERIFICATION_ROW_WIDTH = 7

/**
 * A batch of what a process recorded, as it travels from the process to the engine through the buffer (JSON, a few
 * tens of bytes a row: the strings a row names are listed once per batch and rows refer to them by index).
 */
export interface EncodedBatch {
  /** Format version. */
  f: 1
  /** The recording process's region (its name). */
  g: string
  /** Unix ms every row's time is an offset from. */
  t: number
  /** The keys rows refer to: [keyId, apiId, identityId, externalId]. */
  k: [string, string, string, string][]
  /** The tag lists rows refer to. */
  a: string[][]
  /**
   * Verification rows, VERIFICATION_ROW_WIDTH numbers each: time offset (ms), key index, outcome (index in
   * VERDICT_CODES), source (index in VERIFICATION_SOURCES), credits spent, tags index (-1: none), latency (µs).
   */
  v: number[]
  /** Verifications of keys that do not exist, counted: [apiId, minute (Unix ms), source index, count]. */
  n: [string, number, number, number][]
  /** The namespaces and identifiers rate-limit rows refer to. */
  s: string[]
  /**
   * Rate-limit decisions, RATELIMIT_ROW_WIDTH numbers each: time offset (ms), namespace name (index in `s`),
   * identifier (index in `s`), passed (1 or 0), limit, remaining, latency (µs).
   */
  r: number[]
}

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
  encoded: EncodedBatch,
  idPrefix: string,
  workspaceId: string,
): { verifications: VerificationRow[]; notFound: NotFoundCount[]; ratelimits: RatelimitRow[] } {
  if (encoded.f !== 1) throw new Error(`analytics batch of format ${String(encoded.f)}: this version reads format 1`)
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
  const notFound = encoded.n.map(([apiId, minute, sourceAt, count]): NotFoundCount => {
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
  return { verifications, notFound, ratelimits }
}
