import { failsChecksum } from '../shared/keys/key-checksum.js'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import type { ChangeEvent } from '../shared/change-event.js'
import type { Clock } from '../shared/clock.js'
import type { ChangeFeed } from '../shared/feed/change-feed.js'
import { lastRefillBoundary } from '../shared/keys/credits.js'
import { isIdentityOwner, type AppliedLimit, type CounterOwner } from '../shared/ratelimits/ratelimit.js'
import { DEFAULT_LIMIT, type KeyLimits } from '../shared/keys/key-limits.js'
import { RateLimiter } from './rate-limiter.js'
import { hostname } from 'node:os'
import { AnalyticsRecorder } from '../shared/analytics/analytics-recorder.js'
import { AnalyticsShipper, type ShipperSettings } from '../shared/analytics/analytics-shipper.js'
import { ANALYTICS_BUFFER_SHARDS } from '../shared/store/analytics-buffer/analytics-buffer-store.js'
import { hashKey } from '../shared/keys/key-material.js'
import type { CachedKey } from './cached-key.js'
import type { VerifierStore } from '../shared/store/verifier-store.js'
import { verify, type Verdict, type VerifyRequest } from '../shared/verification/verification.js'
import { frozenWithMemo } from '../shared/frozen-memo.js'
import { isEntityAddress, type StoredEntity } from '../shared/entity.js'
import { EMPTY_CONTEXT, type EntityLookup, type KeyContext } from '../shared/keys/key-context.js'
import { resolveVerifyContext } from '../shared/verification/verify-context.js'
import { addressAllowed } from '../shared/addresses/address-rule.js'
import { clientAddressOf, type AddressedRequest, type ClientAddressOf } from '../shared/addresses/client-address.js'
import { StoreUnavailableError } from '../shared/errors/errors.js'
import { UnknownLimitError } from './unknown-limit-error.js'
import { EntityCache } from './entity-cache.js'
import { RecordLookup } from './record-lookup.js'
import {
  SOCKET_ADDRESS,
  type CacheSettings,
  type ClientAddressSettings,
  type OnStale,
  type SyncSettings,
} from '../shared/config/settings.js'
import { KeyCache } from './key-cache.js'
import { KeyLookup } from './key-lookup.js'
import { KnownHashes } from './known-hashes.js'
import { MissPath } from './miss-path.js'
import { ShardSync, type ChangeSink } from './shard-sync.js'
import { createVerifierMetrics, type VerifierMetrics } from './verifier-metrics.js'

export interface KeyVerifierDeps {
  store: VerifierStore
  feed: ChangeFeed
  /** Wall clock, for expiry. */
  clock: Clock
  /** Monotonic clock, for the staleness bound (a wall-clock step back must not stretch it). */
  elapsed: Clock
  log: Logger
  registry: Registry
  cache: CacheSettings
  sync: SyncSettings
  /** Which address a request is from, for allow-lists (default: the socket's). */
  clientAddress?: ClientAddressSettings | undefined
  /** How verifications are recorded for analytics (default: defaultRecording()). */
  recording?: Partial<RecordingSettings> | undefined
}

/** How a process records its verifications and hands them to the store's analytics buffer. */
export interface RecordingSettings extends ShipperSettings {
  /** The process's region, the `region` of its rows (default: the host's name). */
  region: string
}

/** Every 2 s, at most 200,000 rows held, 256 MiB per buffer; the buffer this process appends to chosen at random. */
export const defaultRecording = (): RecordingSettings => ({
  region: hostname(),
  shard: Math.floor(Math.random() * ANALYTICS_BUFFER_SHARDS),
  flushMs: 2_000,
  maxBufferBytes: 256 * 1024 * 1024,
  maxHeldRows: 200_000,
})

/**
 * Answers "is this key valid?" from memory: hash → cache → the pure rules. A miss reads one record from the
 * store, unless the filter of known hashes shows there is none (miss-path.ts); ShardSync keeps the cache
 * current and says whether it can be trusted. When it cannot (beyond the staleness bound), every verification
 * reads through to the store — and fails closed with 503 if the store is unreachable too — unless
 * `onStale: 'serve'` was chosen.
 */
export class KeyVerifier {
  private readonly cache: KeyCache
  private readonly lookup: KeyLookup
  private readonly known: KnownHashes
  private readonly misses: MissPath
  private readonly entities: EntityCache
  private readonly entityLookup: RecordLookup<StoredEntity<unknown>>
  private readonly sync: ShardSync
  private readonly clock: Clock
  private readonly onStale: OnStale
  private readonly storedKeys: VerifierStore['keys']
  private readonly limiter: RateLimiter
  private readonly addressOf: ClientAddressOf
  /** Where this process records for analytics: its verifications here, its rate-limit decisions (ratelimits.limit). */
  readonly recorder: AnalyticsRecorder
  private readonly shipper: AnalyticsShipper
  /**
   * The times of the verifications decided but not recorded yet (waiting on the store for limits or credits), each
   * with how many: their rows are recorded at those times once the wait is over.
   */
  private readonly deciding = new Map<number, number>()
  /**
   * Resolves at the first sync: the store has answered. Work beside the verifier that reads the store starts then, so
   * that a process starting does not report a connection not made yet as a failure. Pending while it never syncs.
   */
  readonly synced: Promise<void>
  private markSynced: () => void = () => {}
  readonly metrics: VerifierMetrics

  constructor(deps: KeyVerifierDeps) {
    this.clock = deps.clock
    const recording = { ...defaultRecording(), ...deps.recording }
    this.recorder = new AnalyticsRecorder(recording.region, recording.maxHeldRows)
    this.shipper = new AnalyticsShipper(
      deps.store.analyticsBuffer,
      this.recorder,
      deps.log.child({ component: 'analytics' }),
      deps.registry,
      recording,
      () => this.recordedThrough(),
    )
    this.addressOf = clientAddressOf(deps.clientAddress ?? SOCKET_ADDRESS)
    this.synced = new Promise((resolve) => (this.markSynced = resolve))
    this.onStale = deps.sync.onStale
    this.storedKeys = deps.store.keys
    this.limiter = new RateLimiter(
      deps.store.counters,
      deps.log.child({ component: 'rate-limiter' }),
      deps.sync.pollIntervalMs,
      deps.clock,
    )
    this.cache = new KeyCache(deps.cache)
    this.lookup = new KeyLookup(deps.store.keys, this.cache, deps.cache.maxPendingReads)
    // Every cached key may have an identity (or the knowledge that it has none) beside roles and permissions: an
    // entity cache smaller than the key cache would evict what keys resolve through, and send them to Redis after
    // any entity change.
    this.entities = new EntityCache(deps.cache.maxKeys + MAX_CACHED_ENTITIES)
    const storedEntities = deps.store.entities
    this.entityLookup = new RecordLookup(
      (address) => storedEntities.getEntity(address),
      this.entities,
      deps.cache.maxPendingReads,
      'record',
    )
    this.metrics = createVerifierMetrics(deps.registry, {
      cacheSize: () => this.cache.size,
      stalenessSeconds: () => this.sync.stalenessMs / 1000,
      lastPollAgeSeconds: () => this.sync.lastPollAgeMs / 1000,
      maxStalenessSeconds: deps.sync.maxStalenessMs / 1000,
    })
    this.known = new KnownHashes(deps.store.keys, deps.log.child({ component: 'known-hashes' }), deps.registry)
    const sink: ChangeSink = {
      changed: (event) => this.applyChange(event),
      dropShard: (shard) => {
        this.cache.dropShard(shard)
        this.entities.dropShard(shard)
        this.known.dropShard(shard)
      },
      firstSyncDone: () => {
        this.cache.clear()
        this.entities.clear()
        this.known.start()
        this.markSynced()
      },
    }
    if (this.onStale === 'serve') {
      deps.log.warn(
        { maxStalenessMs: deps.sync.maxStalenessMs },
        'ON_STALE=serve: beyond the staleness bound this verifier answers from a cache it cannot confirm current (counted in keygate_stale_answers_total{mode="served"})',
      )
    }
    const changes = deps.store.changes
    this.sync = new ShardSync(changes, deps.feed, sink, this.metrics, deps.log.child({ component: 'shard-sync' }), {
      clock: deps.elapsed,
      maxStalenessMs: deps.sync.maxStalenessMs,
      pollIntervalMs: deps.sync.pollIntervalMs,
    })
    this.misses = new MissPath(this.lookup, this.known, this.cache, this.sync, deps.registry)
  }

  /** Subscribes to changes and starts polling; resolves at the first successful sync. */
  start(): Promise<void> {
    this.limiter.start()
    // Once the store has answered: a hand-over before would fail, and warn of a healthy start that is still connecting.
    void this.synced.then(() => this.shipper.start())
    return this.sync.start()
  }

  /**
   * Stops background work (polling) and hands over the analytics rows and the async rate-limit usage gathered since
   * last handed over: call it before the store closes. The store and feed are closed by whoever opened them.
   */
  async stop(): Promise<void> {
    this.sync.stop()
    this.known.stop()
    await Promise.all([this.limiter.stop(), this.shipper.stop()])
  }

  /** Synced, and confirmed current within the staleness bound. */
  get ready(): boolean {
    return this.sync.current
  }

  /** For /readyz: what is wrong, if anything. */
  notReadyReasons(): string[] {
    if (this.sync.current) return []
    const age = this.sync.stalenessMs
    return [
      Number.isFinite(age)
        ? `cache not confirmed current for ${Math.round(age)} ms (bound exceeded)`
        : 'not synced with the store yet',
    ]
  }

  /** Polls the store now (tests, and the control plane's health). */
  pollNow(): Promise<void> {
    return this.sync.requestPoll()
  }

  /**
   * A change this process itself just wrote: applied at once, so the control plane reads its own writes
   * without waiting for the published copy (which ShardSync still handles in revision order).
   */
  applyChange(event: Pick<ChangeEvent, 'hash' | 'rev' | 'kind'>): void {
    if (isEntityAddress(event.hash)) {
      this.entities.invalidate(event.hash, event.rev)
      this.entityLookup.changed(event)
      return
    }
    this.cache.invalidate(event.hash, event.rev)
    this.lookup.changed(event)
    if (event.kind !== 'deleted') this.known.add(event.hash)
  }

  /**
   * An entity as verdicts see it (null: there is none): from the cache while it is trusted, else read from the store
   * (and cached), as a key's roles are. Synchronous on a hit. ratelimits.limit reads namespaces and overrides so.
   */
  entity<T>(address: string): T | null | Promise<T | null> {
    if (this.sync.current || this.onStale === 'serve') {
      const cached = this.entities.get(address)
      if (cached !== undefined) return cached as T | null
    }
    return this.entityLookup.read(address).then((found) => (found?.doc ?? null) as T | null)
  }

  /** The wall clock verdicts are judged by (unix ms): rate-limit resets are on it. */
  now(): number {
    return this.clock.now()
  }

  /**
   * The verdict for `key` under `request`: synchronous on a cache hit, a promise only when the store must be read.
   * `client` is the HTTP request the key came in (its address is read only for a key or api with an allow-list; none:
   * no address, which no list allows). `visible`, for a caller that may see only keys of the apis it accepts (v2's
   * verifyKey: a root key's reach): any other key answers NOT_FOUND, as one that does not exist — decided before
   * anything of it is resolved, spent or counted against a limit — so that a root key learns nothing about keys
   * beyond its permissions (Unkey's rule).
   */
  verify(
    key: string,
    request: VerifyRequest,
    client?: AddressedRequest,
    visible?: (apiId: string) => boolean,
  ): Verdict | Promise<Verdict> {
    const started = performance.now()
    // A key of the checksummed format whose checksum is wrong exists nowhere: refused as any unknown key is, before
    // the cache and the store are asked (a flood of guesses costs Redis nothing).
    if (failsChecksum(key)) {
      this.metrics.checksumRefusals.inc()
      return this.count(HIDDEN, request, started)
    }
    const hash = hashKey(key)
    if (this.sync.current) {
      const cached = this.cache.get(hash)
      if (cached !== undefined) {
        this.metrics.cacheHits.inc()
        return this.visibleVerdict(cached, request, client, visible, started)
      }
    } else if (this.onStale === 'serve') {
      this.metrics.staleAnswers.labels('served').inc()
      const cached = this.cache.get(hash)
      if (cached !== undefined) return this.visibleVerdict(cached, request, client, visible, started)
    } else {
      this.metrics.staleAnswers.labels('read-through').inc()
    }
    this.metrics.cacheMisses.inc()
    // The cached copy when the read was cached, so that its resolved context is kept for the next verification.
    return this.misses
      .read(hash)
      .then((record) =>
        this.visibleVerdict(record && (this.cache.get(hash) ?? record), request, client, visible, started),
      )
  }

  private visibleVerdict(
    record: CachedKey | null,
    request: VerifyRequest,
    client: AddressedRequest | undefined,
    visible: ((apiId: string) => boolean) | undefined,
    started: number,
  ): Verdict | Promise<Verdict> {
    return record !== null && visible !== undefined && !visible(record.apiId)
      ? this.count(HIDDEN, request, started)
      : this.withContext(record, request, client, started)
  }

  /** Resolves what the key is granted (usually memoised: no work), then decides. */
  private withContext(
    record: CachedKey | null,
    request: VerifyRequest,
    client: AddressedRequest | undefined,
    started: number,
  ): Verdict | Promise<Verdict> {
    if (record === null) return this.decide(null, EMPTY_CONTEXT, request, client, started)
    const context = this.contextOf(record)
    return context instanceof Promise
      ? context.then((resolved) => this.decide(record, resolved, request, client, started))
      : this.decide(record, context, request, client, started)
  }

  /**
   * The key's context from its roles, permissions and identity, and its own and its api's allow-lists: memoised on
   * the cached key until any entity changes; read from the store for what the entity cache lacks. Beyond the
   * staleness bound (unless serving stale) the cache is not trusted, so every record is read afresh, as the key
   * itself is.
   */
  private contextOf(key: CachedKey): KeyContext | Promise<KeyContext> {
    const trusted = this.sync.current || this.onStale === 'serve'
    const generation = this.entities.generation
    if (trusted) {
      const memo = key.resolved
      if (memo !== undefined && memo.generation === generation) return memo.context
    }
    const cached: EntityLookup = trusted ? (address) => this.entities.get(address) : () => undefined
    const result = resolveVerifyContext(key, cached)
    if ('missing' in result) return this.readContext(key, result.missing, cached, generation, trusted)
    if (trusted) key.resolved = { generation, context: result }
    return result
  }

  private async readContext(
    key: CachedKey,
    missing: string[],
    cached: EntityLookup,
    generation: number,
    trusted: boolean,
  ): Promise<KeyContext> {
    const read = new Map<string, unknown>()
    const lookup: EntityLookup = (address) => (read.has(address) ? read.get(address) : cached(address))
    // Roles are read before their permissions: two rounds at most, unless records change under the reads.
    for (let round = 0; round < MAX_CONTEXT_ROUNDS; round++) {
      const found = await Promise.all(missing.map((address) => this.entityLookup.read(address)))
      missing.forEach((address, i) => read.set(address, found[i]?.doc ?? null))
      const result = resolveVerifyContext(key, lookup)
      if (!('missing' in result)) {
        // Memoised only if no entity changed meanwhile: a change during the reads may have been missed by them.
        if (trusted && generation === this.entities.generation) key.resolved = { generation, context: result }
        return result
      }
      missing = result.missing
    }
    throw new StoreUnavailableError(`key ${key.id}: its roles and permissions kept changing while they were read`)
  }

  /**
   * The pure rules first; then, only for a key that carries credits and would be valid, one atomic spend in
   * the store (credits are global: N verifiers let exactly `remaining` calls through). Keys without credits
   * never leave memory.
   */
  private decide(
    record: CachedKey | null,
    context: KeyContext,
    request: VerifyRequest,
    client: AddressedRequest | undefined,
    started: number,
  ): Verdict | Promise<Verdict> {
    const now = this.clock.now()
    if (record === null) return this.count(verify(record, context, request, now), request, started, now)
    // The client's address is read only for a key that an allow-list (its own, its api's) applies to.
    const allowed =
      context.addresses === undefined ||
      addressAllowed(context.addresses, client === undefined ? undefined : this.addressOf(client))
    // A plain request's verdict is a function of the record, its context, the api asked about, whether the key
    // has expired and whether the address is allowed, until it reaches limits or credits: the same inputs answer the
    // very same (frozen) verdict.
    const plain = isPlain(request)
    const expired = record.expires !== undefined && now >= record.expires
    const memo = record.verdict
    if (
      plain &&
      memo !== undefined &&
      memo.context === context &&
      memo.apiId === request.apiId &&
      memo.expired === expired &&
      memo.allowed === allowed
    )
      return this.count(memo.verdict, request, started, now, record)
    const verdict = verify(record, context, request, now, allowed)
    const remember = () => {
      if (!plain) return verdict
      const frozen = frozenWithMemo(verdict)
      record.verdict = { context, apiId: request.apiId, expired, allowed, verdict: frozen }
      return frozen
    }
    if (verdict.code !== 'VALID') return this.count(remember(), request, started, now, record)
    const limits = appliedLimits(record, context.limits, request)
    if (limits.length === 0 && record.remaining === undefined)
      return this.count(remember(), request, started, now, record)
    return this.whileDeciding(
      now,
      this.limitThenSpend(record, context.limits?.group ?? record.hash, request, verdict, limits, now, started),
    )
  }

  /**
   * The time before which every verification of this process is recorded: now, or the time of the earliest one still
   * deciding. What the shipper reports (analytics-shipper.ts), so that the watermark never passes a row on its way.
   */
  private recordedThrough(): number {
    let through = this.clock.now()
    for (const at of this.deciding.keys()) through = Math.min(through, at)
    return through
  }

  /** `decided`, a verification decided at `at` and recorded when it settles, counted as deciding meanwhile. */
  private async whileDeciding(at: number, decided: Promise<Verdict>): Promise<Verdict> {
    this.deciding.set(at, (this.deciding.get(at) ?? 0) + 1)
    try {
      return await decided
    } finally {
      const left = this.deciding.get(at)! - 1
      if (left === 0) this.deciding.delete(at)
      else this.deciding.set(at, left)
    }
  }

  /** Rate limits in order (the auto-applied first), then credits: a rate-limited call spends no credits. */
  private async limitThenSpend(
    record: CachedKey,
    group: CounterOwner,
    request: VerifyRequest,
    valid: Verdict,
    limits: readonly AppliedLimit[],
    now: number,
    started: number,
  ): Promise<Verdict> {
    let verdict = valid
    if (limits.length > 0) {
      const { ok, outcomes, failed } = await this.limiter.checkAll(group, limits, now)
      const state = (i: number) => ({
        limit: outcomes[i]!.limit,
        remaining: outcomes[i]!.remaining,
        reset: outcomes[i]!.reset,
      })
      // Every limit looked at, each without room marked exceeded (the first of them is the one the answer names).
      const ratelimits = outcomes.flatMap((outcome, i) =>
        outcome
          ? [
              {
                name: limits[i]!.name,
                limit: outcome.limit,
                duration: limits[i]!.duration,
                remaining: outcome.remaining,
                reset: outcome.reset,
                exceeded: !outcome.ok,
                autoApply: limits[i]!.autoApply === true,
                ofIdentity: isIdentityOwner(limits[i]!.owner),
              },
            ]
          : [],
      )
      const own = limits.findIndex((limit) => limit.name === DEFAULT_LIMIT)
      verdict = { ...verdict, ratelimits, ...(own >= 0 && outcomes[own] ? { ratelimit: state(own) } : {}) }
      if (!ok) {
        return this.count(
          { ...verdict, valid: false, code: 'RATE_LIMITED', ratelimit: state(failed!) },
          request,
          started,
          now,
          record,
        )
      }
    }
    if (record.remaining === undefined) return this.count(verdict, request, started, now, record)
    const refill = record.refill && { boundary: lastRefillBoundary(record.refill, now), amount: record.refill.amount }
    // Who the balance belongs to, so that a spend crossing the key's threshold or emptying it logs a notice.
    const notice = { keyId: record.id, apiId: record.apiId, lowThreshold: record.creditsLowThreshold }
    const cost = request.cost ?? 1
    const spend = await this.storedKeys.spendCredits(record.hash, cost, refill, now, notice)
    if (spend === null) return this.count(verdict, request, started, now, record)
    return spend.ok
      ? this.count({ ...verdict, remaining: spend.remaining }, request, started, now, record, cost)
      : this.count(
          { ...verdict, valid: false, code: 'USAGE_EXCEEDED', remaining: spend.remaining },
          request,
          started,
          now,
          record,
        )
  }

  /** Reconciles async rate-limit counts with the store now (tests; otherwise every poll interval). */
  reconcileRateLimits(): Promise<void> {
    return this.limiter.reconcile(this.clock.now())
  }

  /**
   * Counts a verdict (metrics) and records the verification for analytics, at `now`, the time it was decided at when
   * the caller has it; `started` is when verify() was called (performance.now()), `record` the key verified (none: a
   * key that does not exist, or one the caller may not see) and `spent` the credits it spent.
   */
  private count(
    verdict: Verdict,
    request: VerifyRequest,
    started: number,
    now: number = this.clock.now(),
    record?: CachedKey,
    spent = 0,
  ): Verdict {
    this.metrics.verdicts[verdict.code].inc()
    const source = request.source ?? 'v1.verifyKey'
    if (record === undefined) this.recorder.recordNotFound(request.apiId, source, now)
    else {
      const latency = performance.now() - started
      this.recorder.record(record, verdict.identity?.id, verdict.code, source, now, spent, request.tags, latency)
    }
    return verdict
  }

  /** Hands the verifications recorded so far to the store's analytics buffer (tests; otherwise every flushMs). */
  flushAnalytics(): Promise<void> {
    return this.shipper.flush()
  }
}

// A key the caller may not see: the answer of a key that does not exist.
const HIDDEN: Verdict = frozenWithMemo({ valid: false, code: 'NOT_FOUND' })
// Roles, permissions, namespaces and overrides a verifier remembers beyond one identity per cached key (absences
// included).
const MAX_CACHED_ENTITIES = 100_000
const MAX_CONTEXT_ROUNDS = 3
const NO_LIMITS: readonly AppliedLimit[] = Object.freeze([])

/** Names no permissions and no limits or costs of them: what its verdict depends on is the key's alone. */
const isPlain = (request: VerifyRequest) =>
  request.permissions === undefined && request.ratelimits === undefined && request.keyLimitCost === undefined

/**
 * The limits of one call, by name: the auto-applied ones, then those the request names, each once (a name named
 * again takes the later cost and keeps its place). A name is the key's limit, else its identity's, else one the
 * request defines with limit and duration (it counts the identity's keys together, as Unkey's do, or the key's
 * alone); limit and duration given override a stored limit's. A name that is none of these is the caller's
 * mistake: 400, as Unkey answers it. Without a request's limits this is the memoised list: no work.
 */
function appliedLimits(
  record: CachedKey,
  limits: KeyLimits | undefined,
  request: VerifyRequest,
): readonly AppliedLimit[] {
  if (request.ratelimits === undefined && request.keyLimitCost === undefined) return limits?.auto ?? NO_LIMITS
  const applied = new Map<string, AppliedLimit>()
  for (const limit of limits?.auto ?? NO_LIMITS) applied.set(limit.name, limit)
  const own = applied.get(DEFAULT_LIMIT)
  if (own && request.keyLimitCost !== undefined) applied.set(DEFAULT_LIMIT, { ...own, cost: request.keyLimitCost })
  for (const [i, asked] of (request.ratelimits ?? []).entries()) {
    const stored = limits?.byName.get(asked.name)
    const limit = asked.limit ?? stored?.limit
    const duration = asked.duration ?? stored?.duration
    if (limit === undefined || duration === undefined) {
      const identity = limits === undefined || limits.group === record.hash ? undefined : limits.group
      throw new UnknownLimitError(
        `ratelimits.${i}: the key ${record.id} ${identity === undefined ? 'has no identity and' : 'and its identity have'} no limit named ${JSON.stringify(asked.name)}; give limit and duration to define one for this call`,
        {
          name: asked.name,
          keyId: record.id,
          ...(identity === undefined ? {} : { identity: { id: identity, externalId: record.ownerId ?? '' } }),
        },
      )
    }
    applied.set(asked.name, {
      name: asked.name,
      limit,
      duration,
      async: asked.async ?? stored?.async ?? true,
      cost: asked.cost ?? 1,
      owner: stored?.owner ?? limits?.adHocOwner ?? record.hash,
      autoApply: stored?.autoApply === true,
    })
  }
  return [...applied.values()]
}
