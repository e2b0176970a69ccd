import { VERDICT_CODES, type VerdictCode } from '../verification/verification.js'
import { VERIFICATION_SOURCES, type VerificationSource } from '../verification/verification-source.js'
import type { EncodedBatch } from './analytics-batch.js'
import { PackedIntegersWriter } from './packed-integers.js'

/** The key a verification was of, as a row names it. */
export interface VerifiedKey {
  id: string
  apiId: string
  /** The externalId of its identity, if it has one. */
  ownerId?: string | undefined
}

const OUTCOME_INDEX = new Map<VerdictCode, number>(VERDICT_CODES.map((code, i) => [code, i]))
const SOURCE_INDEX = new Map<VerificationSource, number>(VERIFICATION_SOURCES.map((source, i) => [source, i]))
const MINUTE_MS = 60_000
/** Apis unknown keys are counted under per batch, at most; more are counted under none (`''`). */
export const MAX_NOT_FOUND_APIS = 1_000

/** A batch being recorded: what it lists, its rows' integers written apart (packed). */
type BatchLists = Omit<EncodedBatch, 'f' | 'v' | 'r'>

/**
 * Records verifications and rate-limit decisions in memory as a batch's columns — a few integers packed per row into
 * byte arrays the recorder keeps (nothing allocated per row), the strings rows name listed once per batch — until
 * take() hands the batch over (analytics-shipper.ts). Holds at most
 * `maxRows` rows between two takes: beyond, a verification is not recorded but counted as dropped, so that memory
 * stays bounded whatever happens downstream. Verifications of keys that do not exist are counted per api, minute and
 * source, not kept as rows: a flood of guessed keys costs a counter, not a row each.
 */
export class AnalyticsRecorder {
  private batch = emptyBatch()
  private readonly verifications = new PackedIntegersWriter()
  private readonly ratelimits = new PackedIntegersWriter()
  private readonly keyIndex = new Map<string, number>()
  private readonly tagsIndex = new Map<string, number>()
  private readonly notFound = new Map<string, [string, number, number, number]>()
  /** The apis unknown keys were counted under in this batch. */
  private readonly notFoundApis = new Set<string>()
  private readonly stringIndex = new Map<string, number>()
  private rows = 0
  /** Verifications not recorded because the batch was full, since the process started. */
  dropped = 0

  constructor(
    private readonly region: string,
    private readonly maxRows: number,
  ) {}

  /** Rows held, and unknown keys' counts. */
  get size(): number {
    return this.rows + this.notFound.size
  }

  /**
   * Records one verification of `key` (which exists) decided at `nowMs`: its outcome, the identity it resolved to,
   * credits it spent, its tags and how long it took (ms).
   */
  record(
    key: VerifiedKey,
    identityId: string | undefined,
    code: VerdictCode,
    source: VerificationSource,
    nowMs: number,
    spentCredits: number,
    tags: readonly string[] | undefined,
    latencyMs: number,
  ): void {
    const batch = this.batchFor(nowMs)
    if (batch === undefined) return
    const row = this.verifications
    row.write(nowMs - batch.t)
    row.write(this.keyAt(key, identityId ?? ''))
    row.write(OUTCOME_INDEX.get(code)!)
    row.write(SOURCE_INDEX.get(source)!)
    row.write(spentCredits)
    row.write(tags === undefined || tags.length === 0 ? -1 : this.tagsAt(tags))
    row.write(Math.round(latencyMs * 1000))
  }

  /**
   * The batch a row recorded at `nowMs` goes in, its place taken; undefined when it holds `maxRows` rows already (the
   * row is counted as dropped).
   */
  private batchFor(nowMs: number): BatchLists | undefined {
    if (this.rows >= this.maxRows) {
      this.dropped++
      return undefined
    }
    if (this.rows === 0) this.batch.t = nowMs
    this.rows++
    return this.batch
  }

  /** Records one rate-limit decision on `identifier` in the namespace named `namespace`, made at `nowMs`. */
  recordRatelimit(
    namespace: string,
    identifier: string,
    passed: boolean,
    limit: number,
    remaining: number,
    nowMs: number,
    latencyMs: number,
  ): void {
    const batch = this.batchFor(nowMs)
    if (batch === undefined) return
    const row = this.ratelimits
    row.write(nowMs - batch.t)
    row.write(this.stringAt(namespace))
    row.write(this.stringAt(identifier))
    row.write(passed ? 1 : 0)
    row.write(limit)
    row.write(remaining)
    row.write(Math.round(latencyMs * 1000))
  }

  /** Counts one verification of a key that does not exist (or that the caller may not see), asked of `apiId`. */
  recordNotFound(apiId: string | undefined, source: VerificationSource, nowMs: number): void {
    const minute = nowMs - (nowMs % MINUTE_MS)
    // The api is the caller's word (v1's verifyKey needs no root key): past MAX_NOT_FOUND_APIS of them in a batch,
    // guesses are counted without theirs, so that guessing apis too makes no more counters than guessing keys.
    let api = apiId ?? ''
    if (!this.notFoundApis.has(api)) {
      if (this.notFoundApis.size < MAX_NOT_FOUND_APIS) this.notFoundApis.add(api)
      else api = ''
    }
    const id = `${api}\u0000${minute}\u0000${source}`
    const counted = this.notFound.get(id)
    if (counted !== undefined) counted[3]++
    else if (this.notFound.size < this.maxRows) this.notFound.set(id, [api, minute, SOURCE_INDEX.get(source)!, 1])
    else this.dropped++
  }

  /** The batch recorded since the last take, and a new one begun; undefined when nothing was recorded. */
  take(): { batch: EncodedBatch; rows: number } | undefined {
    if (this.rows === 0 && this.notFound.size === 0) return undefined
    const lists = this.batch
    const n = [...this.notFound.values()]
    const rows = this.rows + n.length
    const batch: EncodedBatch = {
      f: 2,
      g: this.region,
      t: this.rows === 0 ? n[0]![1] : lists.t,
      k: lists.k,
      a: lists.a,
      v: this.verifications.take(),
      n,
      s: lists.s,
      r: this.ratelimits.take(),
    }
    this.batch = emptyBatch()
    this.keyIndex.clear()
    this.tagsIndex.clear()
    this.stringIndex.clear()
    this.notFound.clear()
    this.notFoundApis.clear()
    this.rows = 0
    return { batch, rows }
  }

  private keyAt(key: VerifiedKey, identityId: string): number {
    const keys = this.batch.k
    const at = this.keyIndex.get(key.id)
    if (at !== undefined) {
      const listed = keys[at]!
      if (listed[1] === key.apiId && listed[2] === identityId && listed[3] === (key.ownerId ?? '')) return at
    }
    // A key not yet listed in this batch, or whose api or identity changed since it was.
    this.keyIndex.set(key.id, keys.length)
    return keys.push([key.id, key.apiId, identityId, key.ownerId ?? '']) - 1
  }

  private stringAt(text: string): number {
    const at = this.stringIndex.get(text)
    if (at !== undefined) return at
    this.stringIndex.set(text, this.batch.s.length)
    return this.batch.s.push(text) - 1
  }

  private tagsAt(tags: readonly string[]): number {
    // JSON, not a join on a separator: a tag may hold any character, the separator too (['a\0b'] is not ['a', 'b']).
    const id = JSON.stringify(tags)
    const at = this.tagsIndex.get(id)
    if (at !== undefined) return at
    this.tagsIndex.set(id, this.batch.a.length)
    return this.batch.a.push([...tags]) - 1
  }
}

const emptyBatch = (): BatchLists => ({ g: '', t: 0, k: [], a: [], n: [], s: [] })
