import type { RedisTarget } from '../store/redis-connection.js'
import { parseOptions, type OptionSpec } from './option-spec.js'

/** The one place that reads process configuration; everything else takes these frozen objects. */

const common = {
  host: (fallback: string): OptionSpec => ({ flag: 'host', env: 'HOST', kind: 'host', default: fallback, description: 'address to listen on' }),
  port: (fallback: number): OptionSpec => ({ flag: 'port', env: 'PORT', kind: 'port', default: fallback, description: 'port to listen on (0 = any free port)' }),
  redis: { flag: 'redis', env: 'REDIS_URL', kind: 'url', default: 'redis://127.0.0.1:6379', description: 'Redis to keep keys in' } as OptionSpec,
  sentinels: { flag: 'redis-sentinels', env: 'REDIS_SENTINELS', kind: 'string', description: 'host:port,… of Redis Sentinels: connect to the master they name (REDIS_URL still gives password, db and TLS: rediss:// is TLS to the sentinels too)' } as OptionSpec,
  clusterNodes: { flag: 'redis-cluster-nodes', env: 'REDIS_CLUSTER_NODES', kind: 'string', description: 'host:port,… seed nodes of a Redis Cluster (REDIS_URL then only gives the password and TLS: rediss://)' } as OptionSpec,
  waitReplicas: { flag: 'redis-wait-replicas', env: 'REDIS_WAIT_REPLICAS', kind: 'int', min: 0, max: 16, default: 0, description: 'replicas every write must reach (WAIT) before it is acknowledged; set ≥ 1 with Sentinel so no acknowledged write is lost in a failover' } as OptionSpec,
  waitTimeout: { flag: 'redis-wait-timeout', env: 'REDIS_WAIT_TIMEOUT_MS', kind: 'int', min: 1, max: 60_000, default: 1_000, description: 'how long a write waits for its replicas before answering 503, ms' } as OptionSpec,
  sentinelName: { flag: 'redis-sentinel-name', env: 'REDIS_SENTINEL_NAME', kind: 'string', default: 'mymaster', description: 'name of the master the sentinels watch' } as OptionSpec,
  rootKey: { flag: 'root-key', env: 'KEYGATE_ROOT_KEY', kind: 'secret', min: 16, description: 'bootstrap root key with every permission (prefer the environment: flags show in ps)' } as OptionSpec,
  logLevel: { flag: 'log-level', env: 'LOG_LEVEL', kind: 'level', default: 'info', description: 'fatal|error|warn|info|debug|trace|silent' } as OptionSpec,
  bodyLimit: { flag: 'body-limit', env: 'BODY_LIMIT_BYTES', kind: 'int', min: 1_024, max: 64 * 1024 * 1024, default: 1_048_576, description: 'largest request body accepted' } as OptionSpec,
  cacheSize: { flag: 'cache-size', env: 'CACHE_MAX_KEYS', kind: 'int', min: 1, max: 100_000_000, default: 1_000_000, description: 'key records the verifier cache holds' } as OptionSpec,
  unknownSize: { flag: 'unknown-cache-size', env: 'UNKNOWN_CACHE_MAX', kind: 'int', min: 1, max: 10_000_000, default: 100_000, description: 'unknown keys remembered (negative cache)' } as OptionSpec,
  unknownTtl: { flag: 'unknown-cache-ttl', env: 'UNKNOWN_CACHE_TTL_MS', kind: 'int', min: 0, max: 3_600_000, default: 10_000, description: 'how long an unknown key is remembered, ms' } as OptionSpec,
  pendingReads: { flag: 'max-pending-reads', env: 'MAX_PENDING_READS', kind: 'int', min: 1, max: 1_000_000, default: 10_000, description: 'distinct keys a verifier reads from Redis at once (cache misses in flight); past it, 503' } as OptionSpec,
  docsUrl: { flag: 'docs-url', env: 'DOCS_BASE_URL', kind: 'string', default: 'https://keygate.dev/docs', description: 'base of the `docs` link in error bodies' } as OptionSpec,
  maxStaleness: { flag: 'max-staleness', env: 'MAX_STALENESS_MS', kind: 'int', min: 100, max: 600_000, default: 5_000, description: 'longest a verifier answers from a cache it cannot confirm current, ms (the revocation bound)' } as OptionSpec,
  pollInterval: { flag: 'poll-interval', env: 'POLL_INTERVAL_MS', kind: 'int', min: 10, max: 60_000, default: 1_000, description: 'how often the verifier polls the shard revisions, ms (keep well under --max-staleness)' } as OptionSpec,
  onStale: { flag: 'on-stale', env: 'ON_STALE', kind: 'choice', choices: ['read-through', 'serve'], default: 'read-through', description: 'beyond the bound: read-through (Redis per request, 503 if down) or serve (stale cache, counted)' } as OptionSpec,
  keyHeader: { flag: 'key-header', env: 'KEY_HEADER', kind: 'string', default: 'x-api-key', description: 'header carrying the key on /v1/authorize and the proxy (Authorization: Bearer always works too)' } as OptionSpec,
  apiId: { flag: 'api-id', env: 'AUTHORIZE_API_ID', kind: 'string', description: 'api the keys must belong to on /v1/authorize and the proxy (header X-Keygate-Api-Id overrides)' } as OptionSpec,
  requirePermissions: { flag: 'require-permissions', env: 'AUTHORIZE_PERMISSIONS', kind: 'string', description: 'comma-separated permissions a key must all have there (header X-Keygate-Permissions overrides)' } as OptionSpec,
  cost: { flag: 'cost', env: 'AUTHORIZE_COST', kind: 'int', min: 0, max: 1_000_000, default: 1, description: 'credits a request costs there, for keys with credits (header X-Keygate-Cost overrides)' } as OptionSpec,
  upstream: { flag: 'upstream', env: 'UPSTREAM_URL', kind: 'http-url', description: 'reverse-proxy mode: forward requests whose key verifies to this origin' } as OptionSpec,
  proxyPort: { flag: 'proxy-port', env: 'PROXY_PORT', kind: 'port', default: 7072, description: 'port of the reverse proxy (with --upstream)' } as OptionSpec,
  upstreamTimeout: { flag: 'upstream-timeout', env: 'UPSTREAM_TIMEOUT_MS', kind: 'int', min: 10, max: 600_000, default: 30_000, description: 'longest wait for the upstream, ms (then 504)' } as OptionSpec,
  upstreamConnections: { flag: 'upstream-connections', env: 'UPSTREAM_CONNECTIONS', kind: 'int', min: 1, max: 10_000, default: 64, description: 'most connections the proxy opens to the upstream' } as OptionSpec,
  managementRateLimit: { flag: 'management-rate-limit', env: 'MANAGEMENT_RATE_LIMIT', kind: 'int', min: 0, max: 10_000_000, default: 6_000, description: 'management calls per root key per minute on each control plane (0 = no limit)' } as OptionSpec,
  shutdownDelay: { flag: 'shutdown-delay', env: 'SHUTDOWN_DELAY_MS', kind: 'int', min: 0, max: 600_000, default: 0, description: 'on SIGTERM, time to stay up while not ready before refusing requests, ms (set it to your load balancer\'s readiness period)' } as OptionSpec,
  shutdownGrace: { flag: 'shutdown-grace', env: 'SHUTDOWN_GRACE_MS', kind: 'int', min: 0, max: 600_000, default: 10_000, description: 'time to drain requests on SIGTERM, ms' } as OptionSpec,
}

export const specs = {
  'control-plane': [common.port(7070), common.host('0.0.0.0'), common.redis, common.sentinels, common.sentinelName, common.clusterNodes, common.waitReplicas, common.waitTimeout, common.rootKey, common.logLevel, common.bodyLimit, common.cacheSize, common.unknownSize, common.unknownTtl, common.pendingReads, common.docsUrl, common.maxStaleness, common.pollInterval, common.onStale, common.managementRateLimit, common.shutdownDelay, common.shutdownGrace],
  verifier: [common.port(7071), common.host('0.0.0.0'), common.redis, common.sentinels, common.sentinelName, common.clusterNodes, common.logLevel, common.bodyLimit, common.cacheSize, common.unknownSize, common.unknownTtl, common.pendingReads, common.docsUrl, common.maxStaleness, common.pollInterval, common.onStale, common.keyHeader, common.apiId, common.requirePermissions, common.cost, common.upstream, common.proxyPort, common.upstreamTimeout, common.upstreamConnections, common.shutdownDelay, common.shutdownGrace],
  dev: [common.port(7070), common.host('127.0.0.1'), common.rootKey, common.logLevel, common.bodyLimit, common.cacheSize, common.unknownSize, common.unknownTtl, common.pendingReads, common.docsUrl, common.maxStaleness, common.pollInterval, common.onStale, common.keyHeader, common.apiId, common.requirePermissions, common.cost, common.managementRateLimit, common.shutdownDelay, common.shutdownGrace],
  'root-key create': [
    common.redis,
    { flag: 'permissions', env: 'KEYGATE_PERMISSIONS', kind: 'string', required: true, description: "'*' or a comma-separated list such as api.*.read_key,api.api_x.update_key" },
    { flag: 'name', env: 'KEYGATE_ROOT_KEY_NAME', kind: 'string', description: 'a name to recognise the root key by' },
  ] as OptionSpec[],
} as const

export type CommandName = keyof typeof specs

export interface ServerConfig {
  port: number
  host: string
  logLevel: string
  bodyLimitBytes: number
  docsBaseUrl: string
  shutdownGraceMs: number
  shutdownDelayMs: number
  cache: { maxKeys: number; maxUnknown: number; unknownTtlMs: number; maxPendingReads: number }
  sync: { maxStalenessMs: number; pollIntervalMs: number; onStale: 'read-through' | 'serve' }
}

export interface ControlPlaneConfig extends ServerConfig {
  redisUrl: string
  replication: { waitReplicas: number; timeoutMs: number }
  /** Sentinel or Cluster, when Redis is not the one server at redisUrl. */
  redisTarget: RedisTarget | undefined
  rootKey: string | undefined
  managementRateLimit: number
}

export interface GatewayConfig {
  keyHeader: string
  apiId: string | undefined
  permissions: string[] | undefined
  cost: number
}

export interface ProxyConfig {
  upstreamUrl: string
  port: number
  timeoutMs: number
  connections: number
}

export interface VerifierConfig extends ServerConfig {
  redisUrl: string
  /** Sentinel or Cluster, when Redis is not the one server at redisUrl. */
  redisTarget: RedisTarget | undefined
  gateway: GatewayConfig
  /** Reverse-proxy mode, when UPSTREAM_URL is set. */
  proxy: ProxyConfig | undefined
}

export interface DevConfig extends ServerConfig {
  rootKey: string | undefined
  managementRateLimit: number
  gateway: GatewayConfig
}

export interface RootKeyCreateConfig {
  redisUrl: string
  permissions: string[]
  name: string | undefined
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

type Values = Record<string, string | number | undefined>

function read(command: CommandName, argv: string[], env: NodeJS.ProcessEnv, extra?: (values: Values, problems: string[]) => void): Values {
  const { values, problems } = parseOptions([...specs[command]], argv, env)
  extra?.(values, problems)
  for (const [flag, env] of [['redis-sentinels', 'REDIS_SENTINELS'], ['redis-cluster-nodes', 'REDIS_CLUSTER_NODES']] as const) {
    if (values[flag] === undefined) continue
    for (const address of String(values[flag]).split(',')) {
      if (!/^[^\s:,]+:\d{1,5}$/.test(address.trim())) problems.push(`${env}: ${JSON.stringify(address)} is not host:port`)
    }
  }
  if (values['redis-sentinels'] !== undefined && values['redis-cluster-nodes'] !== undefined) {
    problems.push('REDIS_SENTINELS and REDIS_CLUSTER_NODES: give one or the other')
  }
  const poll = values['poll-interval']
  const bound = values['max-staleness']
  if (typeof poll === 'number' && typeof bound === 'number' && poll * 2 > bound) {
    problems.push(`POLL_INTERVAL_MS (${poll}) must be at most half of MAX_STALENESS_MS (${bound}), or one slow poll breaks the bound`)
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return values
}

function serverConfig(values: Values): ServerConfig {
  return {
    port: values.port as number,
    host: values.host as string,
    logLevel: values['log-level'] as string,
    bodyLimitBytes: values['body-limit'] as number,
    docsBaseUrl: String(values['docs-url']).replace(/\/+$/, ''),
    shutdownGraceMs: values['shutdown-grace'] as number,
    shutdownDelayMs: values['shutdown-delay'] as number,
    cache: {
      maxKeys: values['cache-size'] as number,
      maxUnknown: values['unknown-cache-size'] as number,
      unknownTtlMs: values['unknown-cache-ttl'] as number,
      maxPendingReads: values['max-pending-reads'] as number,
    },
    sync: {
      maxStalenessMs: values['max-staleness'] as number,
      pollIntervalMs: values['poll-interval'] as number,
      onStale: values['on-stale'] as 'read-through' | 'serve',
    },
  }
}

export function controlPlaneConfig(argv: string[], env: NodeJS.ProcessEnv): Readonly<ControlPlaneConfig> {
  const values = read('control-plane', argv, env)
  return Object.freeze({
    ...serverConfig(values), redisUrl: values.redis as string, redisTarget: redisTargetOf(values), rootKey: values['root-key'] as string | undefined,
    replication: { waitReplicas: values['redis-wait-replicas'] as number, timeoutMs: values['redis-wait-timeout'] as number },
    managementRateLimit: values['management-rate-limit'] as number,
  })
}

const addresses = (list: string) => list.split(',').map((address) => {
  const [host, port] = address.trim().split(':') as [string, string]
  return { host, port: Number(port) }
})

function redisTargetOf(values: Values): RedisTarget | undefined {
  if (values['redis-cluster-nodes'] !== undefined) return { cluster: addresses(String(values['redis-cluster-nodes'])) }
  if (values['redis-sentinels'] !== undefined) return { sentinel: { sentinels: addresses(String(values['redis-sentinels'])), name: String(values['redis-sentinel-name']) } }
  return undefined
}

function gatewayConfig(values: Values): GatewayConfig {
  const permissions = values['require-permissions'] === undefined ? undefined : String(values['require-permissions']).split(',').map((p) => p.trim()).filter(Boolean)
  return {
    keyHeader: String(values['key-header']).toLowerCase(),
    apiId: values['api-id'] as string | undefined,
    permissions: permissions && permissions.length > 0 ? permissions : undefined,
    cost: values.cost as number,
  }
}

export function verifierConfig(argv: string[], env: NodeJS.ProcessEnv): Readonly<VerifierConfig> {
  const values = read('verifier', argv, env)
  const proxy = values.upstream === undefined ? undefined : {
    upstreamUrl: values.upstream as string,
    port: values['proxy-port'] as number,
    timeoutMs: values['upstream-timeout'] as number,
    connections: values['upstream-connections'] as number,
  }
  return Object.freeze({ ...serverConfig(values), redisUrl: values.redis as string, redisTarget: redisTargetOf(values), gateway: gatewayConfig(values), proxy })
}

export function devConfig(argv: string[], env: NodeJS.ProcessEnv): Readonly<DevConfig> {
  const values = read('dev', argv, env)
  return Object.freeze({
    ...serverConfig(values), rootKey: values['root-key'] as string | undefined, gateway: gatewayConfig(values),
    managementRateLimit: values['management-rate-limit'] as number,
  })
}

export const PERMISSION_PATTERN = /^(\*|api\.[A-Za-z0-9_*]+\.(create_api|read_api|delete_api|create_key|read_key|update_key|delete_key|read_analytics|\*))$/

export function rootKeyCreateConfig(argv: string[], env: NodeJS.ProcessEnv): Readonly<RootKeyCreateConfig> {
  let permissions: string[] = []
  const values = read('root-key create', argv, env, (raw, problems) => {
    permissions = String(raw.permissions ?? '').split(',').map((p) => p.trim()).filter(Boolean)
    for (const permission of permissions) {
      if (!PERMISSION_PATTERN.test(permission)) {
        problems.push(`--permissions: ${JSON.stringify(permission)} is not '*' or api.<apiId|*>.<action>`)
      }
    }
    if (raw.permissions !== undefined && permissions.length === 0) problems.push('--permissions: give at least one')
  })
  return Object.freeze({ redisUrl: values.redis as string, permissions, name: values.name as string | undefined })
}
