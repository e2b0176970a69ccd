/**
 * The groups of settings the processes are built with. Each is filled from the option table (config.ts) and
 * taken as it is by the code it configures: one type per concept, for the CLI and the tests alike.
 */

/** The verifier's in-memory cache. */
export interface CacheSettings {
  /** Key records held at most. */
  maxKeys: number
  /** Unknown hashes remembered at most, in their own LRU so a flood of random keys cannot evict real ones. */
  maxUnknown: number
  /** How long an unknown hash is remembered, ms; a create event for it forgets it at once. */
  unknownTtlMs: number
  /** Distinct keys read from the store at once (cache misses in flight); past it, 503. Default 10,000. */
  maxPendingReads?: number
}

/** What to do when the cache cannot be confirmed current within the bound. */
export type OnStale = 'read-through' | 'serve'

/** How the verifier keeps its cache current, and the revocation bound it keeps. */
export interface SyncSettings {
  /** Longest the verifier answers from a cache it cannot confirm current, ms (the revocation bound). */
  maxStalenessMs: number
  /** How often the shard revisions are polled, ms. */
  pollIntervalMs: number
  /** `read-through` (default): read every key from Redis, 503 if unreachable. `serve`: answer from the stale cache. */
  onStale: OnStale
}

/** Which address a request is from, for the allow-lists of keys and apis (shared/addresses/client-address.ts). */
export interface ClientAddressSettings {
  /**
   * `socket`: the connection's peer. `forwarded`: from a trusted proxy, the client it names in X-Forwarded-For; from
   * any other peer, that peer.
   */
  mode: 'socket' | 'forwarded'
  /** The proxies whose X-Forwarded-For is believed, as normalised ranges (`forwarded` only, and never empty then). */
  trustedProxies: readonly string[]
}

/** What the processes take when nothing is configured: the socket's address, no proxy trusted. */
export const SOCKET_ADDRESS: ClientAddressSettings = Object.freeze({ mode: 'socket', trustedProxies: [] })

/** What a gateway-facing verifier checks unless a request header (set by the gateway) says otherwise. */
export interface GatewayPolicy {
  /** Header carrying the key, lower case (default x-api-key); `Authorization: Bearer` always works too. */
  keyHeader: string
  /**
   * The api keys must belong to. Without it, and without `anyApi`, forward-auth refuses a request whose gateway
   * names no api (X-Keygate-Api-Id), and the proxy cannot be built.
   */
  apiId?: string | undefined
  /** Keys of every api are accepted when no api id is given (`--any-api`: the operator said so). */
  anyApi?: boolean | undefined
  permissions?: readonly string[] | undefined
  /** Credits a request costs, for keys with credits. */
  cost: number
}

/** Reverse-proxy mode of the verifier. */
export interface ProxySettings {
  /** The upstream's origin (no path: paths pass through as requested). */
  upstreamUrl: string
  port: number
  /** Longest wait for the upstream's response headers (and between body chunks), ms: then 504. */
  timeoutMs: number
  /** Most connections the pool opens to the upstream. */
  connections: number
  /**
   * Whether the client's Authorization header reaches the upstream (an upstream with credentials of its own in it);
   * by default the proxy, having authenticated the request, removes it. A header holding the key is removed always.
   */
  passAuthorization?: boolean | undefined
}

/** Replicas every write must reach (Redis WAIT) before it is acknowledged. */
export interface ReplicationSettings {
  waitReplicas: number
  timeoutMs: number
}

/** What operators decide about webhooks (KEYGATE_WEBHOOK_* options), given to the operations and the worker. */
export interface WebhookPolicy {
  /**
   * Whether endpoints may be on loopback, private, link-local and other non-public addresses (self-hosters who
   * deliver inside their own network). Off by default: a root key must not be able to make the control plane call
   * into the network it runs in.
   */
  allowPrivateAddresses: boolean
  /** How long a request to an endpoint may take, ms. */
  timeoutMs: number
  /** How long retries go on after an event was queued before it goes to the dead letters, ms. */
  retryWindowMs: number
  /** The longest wait between two attempts, ms: waits double from a second up to this. */
  retryMaxDelayMs: number
  /** How long before a key's expiry `key.expiring` is sent, ms. */
  expiringLeadMs: number
}
