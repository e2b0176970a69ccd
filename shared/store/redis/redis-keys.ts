import { entityShard } from '../../entity.js'
import { digestOf } from '../../ratelimits/ratelimit-namespace.js'
import { isIdentityOwner, type CounterOwner } from '../../ratelimits/ratelimit.js'
import { shardOf } from '../../shards.js'

/**
 * Every Redis key and channel name Keygate uses. Anything a script touches together shares one hash tag,
 * so the same code runs on a single Redis and on a Redis Cluster.
 */
const shardTag = (shard: number) => `{s${shard}}`
const rateSlot = (group: CounterOwner) => (isIdentityOwner(group) ? `{${group}}` : shardTag(shardOf(group)))

export const redisKeys = {
  /** HASH {rev, doc}: the key record, in its shard's slot. */
  record: (hash: string) => `kg:${shardTag(shardOf(hash))}:k:${hash}`,
  /** SCAN pattern of every key record; it matches other keys too (a rate window's name is any text): recordHash. */
  records: 'kg:{s*}:k:*',
  /** HASH {rev, doc}: an entity (shared/entity.ts) by address, in its shard's slot. */
  entity: (address: string) => `kg:${shardTag(entityShard(address))}:e:${address}`,
  /** ZSET (score 0, ordered by member): an index of entities, e.g. every role's id. Never decides a verdict. */
  entityIndex: (index: string) => `kg:idx:${index}`,
  /** STRING: a unique name's pointer (a permission's name → its id). Never decides a verdict. */
  entityName: (scope: string, name: string) => `kg:name:${scope}:${name}`,
  /** HASH {rev, epoch}: the shard's revision counter and the identity of its sequence. */
  revision: (shard: number) => `kg:${shardTag(shard)}:rev`,
  /** SORT GET pattern of every shard's revision counter: `*` is the shard's number (see shardNumbers). */
  revisionPattern: 'kg:{s*}:rev',
  /**
   * SET of the shard numbers 0–63, never changed: SORT_RO of it GETs every shard's revision counter in one command,
   * on a single Redis (a Cluster has them on several nodes). Written by whoever finds it missing or incomplete.
   */
  shardNumbers: 'kg:shards',
  /** STREAM of changes, entry id `<rev>-1`, capped. */
  changeLog: (shard: number) => `kg:${shardTag(shard)}:log`,
  /**
   * STREAM of the records as each change wrote them (change-snapshot-store.ts), entry id `<rev>-1` as the log's:
   * fields `doc` and, for a key with credits, `credits`. Read and trimmed by the webhooks' deriver, capped.
   */
  changeSnapshots: (shard: number) => `kg:${shardTag(shard)}:snap`,
  /**
   * STREAM of credit notices (shared/keys/credit-notice.ts), written by the credit scripts beside the balance, capped.
   */
  creditNotices: (shard: number) => `kg:${shardTag(shard)}:credits`,
  /**
   * STRING counter: one rate-limit window of an owner (a key's hash or an identity's id), expiring after the window,
   * in its call's group slot: the key's shard, or the identity's own tag (every key of it counts there). The name is
   * last: it may hold any character.
   */
  rateWindow: (group: CounterOwner, owner: CounterOwner, name: string, duration: number, window: number) =>
    `kg:${rateSlot(group)}:rl:${owner}:${duration}:${window}:${name}`,
  /**
   * STRING counter: one window of an identifier in a rate-limit namespace (ratelimits.limit), in the slot of that
   * identifier alone (the digest: any name and identifier, fixed length), expiring after the window.
   */
  namespaceWindow: (namespace: string, identifier: string, duration: number, window: number) =>
    `kg:rlns:{${digestOf(JSON.stringify([namespace, identifier]))}}:${duration}:${window}`,
  /**
   * HASH {success, rateLimited, usageExceeded}: a key's verification counter of an hour or day as verifiers kept them
   * before analytics, in the key id's slot; only read, to be moved into the engine, and dropped.
   */
  usage: (keyId: string, granularity: string, time: number) => `kg:usage:{${keyId}}:${granularity}:${time}`,
  /** STRING (JSON): the move of a page of those counters begun and not ended (usage-counter-store.ts, CounterMove). */
  usageMove: 'kg:usage-move',
  /** STREAM of audit entries (field `entry`: JSON), capped. */
  auditLog: 'kg:{audit}:log',
  /** STRING hash: keyId → record pointer (own slot; never decides a verdict). */
  keyIdIndex: (keyId: string) => `kg:kid:${keyId}`,
  /** STRING json: the api record. */
  api: (apiId: string) => `kg:api:{${apiId}}`,
  /** ZSET of key ids (score 0, ordered by id) in the api's slot. */
  apiKeys: (apiId: string) => `kg:api:{${apiId}}:keys`,
  /** ZSET of key ids of one owner (externalId) in the api's slot. */
  apiOwnerKeys: (apiId: string, ownerId: string) => `kg:api:{${apiId}}:owner:${ownerId}`,
  /** HASH hash → root key record json. Every root key lives in the one `{root}` slot, so its writes are atomic. */
  rootKeys: 'kg:{root}:keys',
  /** HASH root key id → hash. */
  rootKeyIds: 'kg:{root}:ids',
  /** HASH hash → when the root key last authenticated a call, unix ms. */
  rootKeysUsed: 'kg:{root}:used',
  /** SET of the hashes of revoked root keys (see redis-root-key-scripts.ts). */
  revokedRootKeys: 'kg:{root}:revoked',
  /** STRING `disabled` while the bootstrap root key (KEYGATE_ROOT_KEY) is turned off. */
  bootstrapRootKey: 'kg:{root}:bootstrap',
  /** STRING json: a root key in the legacy layout (a slot of its own); moved into the `{root}` slot when found. */
  legacyRootKey: (hash: string) => `kg:root:${hash}`,
  /** STRING: set once every legacy root key has been looked for (by SCAN) and moved. */
  legacyRootKeysMoved: 'kg:{root}:legacy-moved',
  // Webhooks: every key in the one `{wh}` slot, so that each of the store's steps is one script (webhook-store.ts).
  /** HASH endpoint id → endpoint json. */
  webhookEndpoints: 'kg:{wh}:ep',
  /** HASH shard → json {epoch, rev}: how far the webhook deriver has read each shard's change log. */
  webhookCursors: 'kg:{wh}:cursor',
  /** HASH shard → the id of the last credit notice the deriver read in that shard. */
  webhookNoticeCursors: 'kg:{wh}:ncursor',
  /** HASH event id → event json, kept for replay until pruned. */
  webhookEvents: 'kg:{wh}:ev',
  /** ZSET of event ids by when each was made (`madeAt`, else `at`): the events in the order they were made. */
  webhookEventTimes: 'kg:{wh}:evt',
  /** HASH delivery id → delivery json (attempts first: redis-webhook-scripts.ts rewrites it), for queued ones. */
  webhookDeliveries: 'kg:{wh}:dl',
  /**
   * ZSET of an endpoint's queued delivery ids by when each is due, unix ms (a claim moves it to its lease's end). The
   * claim script names the queues it reaches itself, from this prefix: they are in `{wh}` with every key it is given.
   */
  webhookQueue: (endpointId: string) => `kg:{wh}:q:${endpointId}`,
  /**
   * ZSET of the endpoints with deliveries queued, by when a claim looks at each next: its earliest due delivery's time,
   * or later while a claim passes it over (its slots full).
   */
  webhookQueuedEndpoints: 'kg:{wh}:qep',
  /**
   * ZSET of queued delivery ids by when each is due: the single queue of releases before the per-endpoint queues. Each
   * claim moves a batch of it into them (redis-webhook-scripts.ts), until it is empty and gone.
   */
  webhookLegacyDue: 'kg:{wh}:due',
  /** LIST of attempt json, newest first, capped: an endpoint's delivery log. The id is last: any text. */
  webhookAttempts: (endpointId: string) => `kg:{wh}:att:${endpointId}`,
  /** LIST of test attempt json, newest first, capped: an endpoint's tests (webhooks.sendTest), apart from its log. */
  webhookTests: (endpointId: string) => `kg:{wh}:test:${endpointId}`,
  /** LIST of delivery json, newest first, capped: an endpoint's dead letters. */
  webhookDead: (endpointId: string) => `kg:{wh}:dead:${endpointId}`,
  /** ZSET of deadline members by when each fires, unix ms. */
  webhookDeadlines: 'kg:{wh}:sched',
  /** STRING holder, expiring (PX) when the lease runs out. */
  webhookLease: (name: string) => `kg:{wh}:lease:${name}`,
  /**
   * STREAM of a process's analytics batches on their way to the engine (analytics-buffer-store.ts): entries `b` (the
   * batch), `r` (rows), `n` (bytes). Each buffer in a slot of its own, so that a Cluster spreads them.
   */
  analyticsBuffer: (shard: number) => `kg:{ab${shard}}:batches`,
  /** HASH {bytes, trimmed, first, last}: a buffer's size, rows trimmed, and the batches an ingest took. */
  analyticsBufferState: (shard: number) => `kg:{ab${shard}}:state`,
  /** HASH `<process>` → `<through>:<at>`: each recording process's last report (analytics-buffer-store.ts). */
  analyticsReports: 'kg:analytics:reports',
  /** HASH `<name>` → Unix ms: the ingest's watermark and how far usage events were sent, each only ever raised. */
  analyticsMarks: 'kg:analytics:marks',
  /** STRING, expiring: an analytics lease (the ingest's), holding its holder's name. */
  analyticsLease: (name: string) => `kg:analytics:lease:${name}`,
  /** STRING, expiring: a leak report's claim, by the SHA-256 (hex) of its signed body (leak-report-store.ts). */
  leakReport: (digest: string) => `kg:leakrep:${digest}`,
  // Portal sessions: every key in the one `{ps}` slot, so that each step is one script (portal-session-store.ts).
  /**
   * HASH: `<id>` → the session's json as created; beside it its state, `<id>:c` code hash, `<id>:ce` code expiry,
   * `<id>:t` token hash, `<id>:te` token expiry, `<id>:r` when revoked.
   */
  portalSessions: 'kg:{ps}:s',
  /** HASH code hash → session id, until exchanged. */
  portalCodes: 'kg:{ps}:c',
  /** HASH token hash → session id. */
  portalTokens: 'kg:{ps}:t',
  /** ZSET session id by when it is forgotten (its token's expiry, or its code's if never exchanged), unix ms. */
  portalExpiry: 'kg:{ps}:x',
  /** Pub/sub channel of change events. */
  changesChannel: 'kg:changes',
} as const

/** The key hash of a key record's Redis key (redisKeys.record), undefined for any other key. */
export function recordHash(redisKey: string): string | undefined {
  return RECORD.exec(redisKey)?.[1]
}

const RECORD = /^kg:\{s\d+\}:k:(.+)$/
