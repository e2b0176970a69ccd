import { Cluster, type Redis, type RedisOptions } from 'ioredis'
import { CoalescingRedis } from './coalescing-redis.js'
import { watchClusterNodes } from './cluster-node-watch.js'
import { failUnansweredOnClose } from './cluster-unanswered-commands.js'
import { StoreUnavailableError } from '../../errors/errors.js'

/** A single Redis (or one behind Sentinel), or a Redis Cluster: every multi-key step stays in one slot. */
export type RedisClient = Redis | Cluster

/**
 * Connections fail fast instead of queueing: a request that cannot reach Redis answers 503 at once
 * rather than hanging, and the client retries. Reconnects go on in the background for ever.
 */
export function connectionOptions(name: string): RedisOptions {
  return {
    connectionName: `keygate-${name}`,
    // One server or Sentinel: CoalescingRedis batches a turn's writes instead (coalescing-redis.ts says why).
    enableAutoPipelining: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 2_000,
    lazyConnect: true,
    retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 1_000),
  }
}

/**
 * The stores' scripts that take their keys' count first (defined without numberOfKeys: redis-counter-store.ts').
 * ioredis' auto-pipelining on a Cluster groups commands by the slot of their first argument
 * — the count for these, not a key —, so calls for keys in different slots would go into one pipeline, which refuses
 * them all ("All keys in the pipeline should belong to the same slots allocation group": concurrent exact rate
 * limits would fail). On a Cluster they are sent on their own, routed by their keys.
 */
export const SCRIPTS_WITH_KEY_COUNT = ['consumeRateLimits']

/**
 * A connection that connects and reconnects in the background: servers start even while Redis is down
 * and report it through readiness.
 */
export function createRedis(
  url: string,
  name: string,
  overrides: RedisOptions = {},
  target?: RedisTarget,
): Redis | Cluster {
  const options = { ...connectionOptions(name), lazyConnect: false, ...overrides }
  const redis = target?.cluster
    ? new Cluster(target.cluster, {
        redisOptions: { ...options, ...credentialsOf(url) },
        enableOfflineQueue: false,
        enableAutoPipelining: true,
        autoPipeliningIgnoredCommands: SCRIPTS_WITH_KEY_COUNT,
        lazyConnect: options.lazyConnect,
        clusterRetryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 1_000),
      })
    : target?.sentinel
      ? new CoalescingRedis({ ...sentinelOptions(url, target.sentinel), ...options })
      : new CoalescingRedis(url, options)
  // A Cluster's node connections are ioredis' own, timed but never replaced by it (cluster-node-watch.ts), and would
  // send again what a closed one left unanswered (cluster-unanswered-commands.ts).
  if (redis instanceof Cluster) failUnansweredOnClose(redis)
  if (redis instanceof Cluster && options.commandTimeout !== undefined) watchClusterNodes(redis, options.commandTimeout)
  countErrors(redis, name)
  return redis
}

const errorCounts = new Map<string, number>()

/**
 * Connection `error` events (refused, reset, timed out: ioredis emits one per failed attempt) by connection name,
 * for keygate_redis_errors_total. Process-wide, like Node's process metrics: a process runs one server.
 */
export function redisErrorCounts(): ReadonlyMap<string, number> {
  return errorCounts
}

// Errors are surfaced by commands and readiness, and counted; without a listener ioredis would print each to stderr.
function countErrors(redis: Redis | Cluster, name: string): void {
  if (!errorCounts.has(name)) errorCounts.set(name, 0)
  const count = () => errorCounts.set(name, (errorCounts.get(name) ?? 0) + 1)
  redis.on('error', count)
  // A connection ended because Redis stopped answering on it (coalescing-redis.ts, cluster-node-watch.ts): a dead
  // path, counted as an error.
  redis.on('stranded', count)
  // A Cluster reports its nodes' connection errors apart from its own.
  if (redis instanceof Cluster) redis.on('node error', count)
}

/** Redis behind Sentinel: the sentinels to ask, and the name of the master they watch. */
export interface SentinelTarget {
  sentinels: { host: string; port: number }[]
  name: string
}

/** Where Redis is when it is not one server at REDIS_URL: behind Sentinel, or a Cluster. */
export interface RedisTarget {
  sentinel?: SentinelTarget
  /** Seed nodes of a Redis Cluster. */
  cluster?: { host: string; port: number }[]
}

/**
 * What REDIS_URL says of the nodes when Sentinel or Cluster find them: credentials, and TLS for `rediss:`.
 * ioredis infers TLS from the scheme only when it parses the URL itself (one server at REDIS_URL).
 */
function credentialsOf(url: string): RedisOptions {
  const parsed = new URL(url)
  return {
    username: parsed.username || undefined,
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  }
}

/** Sentinel connection options; credentials, db and TLS still come from REDIS_URL when it has them. */
function sentinelOptions(url: string, sentinel: SentinelTarget): RedisOptions {
  const parsed = new URL(url)
  const credentials = credentialsOf(url)
  return {
    sentinels: sentinel.sentinels,
    name: sentinel.name,
    // Reconnect to the new master as soon as the sentinels announce a switch, and whenever the node we are on
    // answers READONLY (it was demoted): without these a forced failover can leave writes failing for a while.
    failoverDetector: true,
    reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 2 : false),
    ...credentials,
    db: parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : undefined,
    // rediss: is TLS everywhere, as Redis' own TLS set-up has it (sentinels share the servers' tls-port settings).
    // In Sentinel mode ioredis ignores `tls` for the master and replicas unless enableTLSForSentinelMode is set;
    // sentinelTLS is for the sentinels themselves.
    ...(credentials.tls ? { enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
  }
}

/** Opens a connection to `url` and waits until it is ready (or throws StoreUnavailableError). */
export async function openRedis(url: string, name: string, overrides: RedisOptions = {}): Promise<Redis> {
  const redis = new CoalescingRedis(url, { ...connectionOptions(name), ...overrides })
  countErrors(redis, name)
  try {
    await redis.connect()
  } catch (err) {
    redis.disconnect()
    throw new StoreUnavailableError(`cannot connect to Redis at ${redactUrl(url)}`, { cause: err })
  }
  return redis
}

/**
 * Opens a connection to the Redis that `url` and `target` name (one server, behind Sentinel, or a Cluster), as the
 * servers find it, and waits until it is ready, at most `timeoutMs` (ioredis retries unreachable sentinels for
 * ever), or throws StoreUnavailableError: for commands that run once.
 */
export async function connectRedis(
  url: string,
  name: string,
  target?: RedisTarget,
  timeoutMs = 10_000,
): Promise<Redis | Cluster> {
  const redis = createRedis(url, name, { lazyConnect: true }, target)
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not ready after ${timeoutMs} ms`)), timeoutMs)
  })
  try {
    await Promise.race([redis.connect(), timedOut])
  } catch (err) {
    redis.disconnect()
    throw new StoreUnavailableError(`cannot connect to Redis ${describeTarget(url, target)}`, { cause: err })
  } finally {
    clearTimeout(timer)
  }
  return redis
}

/** Where a connection goes, for errors: never a password. */
function describeTarget(url: string, target: RedisTarget | undefined): string {
  const list = (nodes: { host: string; port: number }[]) => nodes.map((n) => `${n.host}:${n.port}`).join(',')
  if (target?.cluster) return `Cluster (nodes ${list(target.cluster)})`
  if (target?.sentinel) return `master ${target.sentinel.name} (sentinels ${list(target.sentinel.sentinels)})`
  return `at ${redactUrl(url)}`
}

/** A Redis URL without its password, for logs and errors. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return '<invalid url>'
  }
}

// Replies that mean "Redis cannot serve this now", as opposed to a bug in a command or script: a slot being moved by a
// reshard (MOVED, ASK, TRYAGAIN) among them, which storeCall tries again first, and a WAIT that a failover ended while
// it waited (UNBLOCKED: the server became a replica).
const UNAVAILABLE_REPLIES =
  /^(LOADING|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|MOVED|ASK|OOM|BUSY|NOPERM|NOREPLICAS|NOAUTH|WRONGPASS|UNBLOCKED)\b/
/**
 * A WAIT sent to a master that a failover has made a replica since the write, refused with a plain ERR: a manual
 * failover (CLUSTER FAILOVER, REPLICAOF) leaves the old master's clients connected, and a Cluster client's map of
 * masters lags a failover by a moment. Like READONLY, the server is not the master any more.
 */
const WAIT_ON_A_REPLICA = /^ERR WAIT cannot be used with replica instances/

const unavailable = (message: string) => UNAVAILABLE_REPLIES.test(message) || WAIT_ON_A_REPLICA.test(message)

/**
 * Maps a Redis client error to StoreUnavailableError when it means Redis could not be used. ioredis puts the failed
 * command on its errors with every argument — key hashes, entity addresses such as `rootkey:<hash>` —, and errors
 * are logged: only the command's name is kept.
 */
export function toStoreError(err: unknown): unknown {
  if (err instanceof StoreUnavailableError) return err
  withoutArguments(err)
  if (err instanceof Error && err.name === 'ReplyError' && !unavailable(err.message)) return err
  return new StoreUnavailableError('the store cannot be reached', { cause: err })
}

function withoutArguments(err: unknown): void {
  const command = (err as { command?: { name?: unknown } } | null)?.command
  if (command && typeof command === 'object') (err as { command: unknown }).command = { name: command.name }
}
