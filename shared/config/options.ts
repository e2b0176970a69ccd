import { option } from './option-spec.js'

/** The option table: every flag and environment variable of every command, with its kind, limits and default. */

const common = {
  host: (fallback: string) =>
    option({ flag: 'host', env: 'HOST', kind: 'host', default: fallback, description: 'address to listen on' }),
  port: (fallback: number) =>
    option({
      flag: 'port',
      env: 'PORT',
      kind: 'port',
      default: fallback,
      description: 'port to listen on (0 = any free port)',
    }),
  redis: option({
    flag: 'redis',
    env: 'REDIS_URL',
    kind: 'url',
    default: 'redis://127.0.0.1:6379',
    description: 'Redis to keep keys in',
  }),
  sentinels: option({
    flag: 'redis-sentinels',
    env: 'REDIS_SENTINELS',
    kind: 'string',
    description:
      'host:port,… of Redis Sentinels: connect to the master they name (REDIS_URL still gives password, db and TLS: rediss:// is TLS to the sentinels too)',
  }),
  clusterNodes: option({
    flag: 'redis-cluster-nodes',
    env: 'REDIS_CLUSTER_NODES',
    kind: 'string',
    description:
      'host:port,… seed nodes of a Redis Cluster (REDIS_URL then only gives the password and TLS: rediss://)',
  }),
  waitReplicas: option({
    flag: 'redis-wait-replicas',
    env: 'REDIS_WAIT_REPLICAS',
    kind: 'int',
    min: 0,
    max: 16,
    description:
      'replicas every write must reach (WAIT) before it is acknowledged, so that no acknowledged write is lost in a failover; default 1 with Sentinel (REDIS_SENTINELS), else 0 (0 turns it off)',
  }),
  waitTimeout: option({
    flag: 'redis-wait-timeout',
    env: 'REDIS_WAIT_TIMEOUT_MS',
    kind: 'int',
    min: 1,
    max: 60_000,
    default: 1_000,
    description: 'how long a write waits for its replicas before answering 503, ms',
  }),
  sentinelName: option({
    flag: 'redis-sentinel-name',
    env: 'REDIS_SENTINEL_NAME',
    kind: 'string',
    default: 'mymaster',
    description: 'name of the master the sentinels watch',
  }),
  rootKey: option({
    flag: 'root-key',
    env: 'KEYGATE_ROOT_KEY',
    kind: 'secret',
    min: 16,
    description: 'bootstrap root key with every permission (prefer the environment: flags show in ps)',
  }),
  logLevel: option({
    flag: 'log-level',
    env: 'LOG_LEVEL',
    kind: 'level',
    default: 'info',
    description: 'fatal|error|warn|info|debug|trace|silent',
  }),
  bodyLimit: option({
    flag: 'body-limit',
    env: 'BODY_LIMIT_BYTES',
    kind: 'int',
    min: 1_024,
    max: 64 * 1024 * 1024,
    default: 1_048_576,
    description: 'largest request body accepted',
  }),
  cacheSize: option({
    flag: 'cache-size',
    env: 'CACHE_MAX_KEYS',
    kind: 'int',
    min: 1,
    max: 100_000_000,
    default: 1_000_000,
    description: 'key records the verifier cache holds',
  }),
  unknownSize: option({
    flag: 'unknown-cache-size',
    env: 'UNKNOWN_CACHE_MAX',
    kind: 'int',
    min: 1,
    max: 10_000_000,
    default: 100_000,
    description: 'unknown keys remembered (negative cache)',
  }),
  unknownTtl: option({
    flag: 'unknown-cache-ttl',
    env: 'UNKNOWN_CACHE_TTL_MS',
    kind: 'int',
    min: 0,
    max: 3_600_000,
    default: 10_000,
    description: 'how long an unknown key is remembered, ms',
  }),
  pendingReads: option({
    flag: 'max-pending-reads',
    env: 'MAX_PENDING_READS',
    kind: 'int',
    min: 1,
    max: 1_000_000,
    default: 10_000,
    description: 'distinct keys a verifier reads from Redis at once (cache misses in flight); past it, 503',
  }),
  docsUrl: option({
    flag: 'docs-url',
    env: 'DOCS_BASE_URL',
    kind: 'link-base',
    default: '/docs',
    description:
      "base of the `docs` link in error bodies: a path on the server that answered (which serves /docs/errors), linked at the address the request came to, or the public URL of a control plane's /docs",
  }),
  maxStaleness: option({
    flag: 'max-staleness',
    env: 'MAX_STALENESS_MS',
    kind: 'int',
    min: 100,
    max: 600_000,
    default: 2_000,
    description: 'longest a verifier answers from a cache it cannot confirm current, ms (the revocation bound)',
  }),
  pollInterval: option({
    flag: 'poll-interval',
    env: 'POLL_INTERVAL_MS',
    kind: 'int',
    min: 10,
    max: 60_000,
    default: 500,
    description: 'how often the verifier polls the shard revisions, ms (keep well under --max-staleness)',
  }),
  onStale: option({
    flag: 'on-stale',
    env: 'ON_STALE',
    kind: 'choice',
    choices: ['read-through', 'serve'],
    default: 'read-through',
    description: 'beyond the bound: read-through (Redis per request, 503 if down) or serve (stale cache, counted)',
  }),
  clientAddress: option({
    flag: 'client-address',
    env: 'CLIENT_ADDRESS',
    kind: 'choice',
    choices: ['socket', 'forwarded'],
    default: 'socket',
    description:
      "the address allow-lists are checked against: socket (the connection's peer) or forwarded (X-Forwarded-For from a --trusted-proxies peer)",
  }),
  trustedProxies: option({
    flag: 'trusted-proxies',
    env: 'TRUSTED_PROXIES',
    kind: 'string',
    description:
      'comma-separated addresses or CIDR ranges of the proxies whose X-Forwarded-For is believed (required with --client-address forwarded, and only then)',
  }),
  keyHeader: option({
    flag: 'key-header',
    env: 'KEY_HEADER',
    kind: 'string',
    default: 'x-api-key',
    description: 'header carrying the key on /v1/authorize and the proxy (Authorization: Bearer always works too)',
  }),
  apiId: option({
    flag: 'api-id',
    env: 'AUTHORIZE_API_ID',
    kind: 'string',
    description:
      'api the keys must belong to on /v1/authorize and the proxy (header X-Keygate-Api-Id overrides); without it (or --any-api) /v1/authorize refuses requests that do not name one, and the proxy does not start',
  }),
  anyApi: option({
    flag: 'any-api',
    env: 'AUTHORIZE_ANY_API',
    kind: 'boolean',
    default: false,
    description:
      'accept keys of every api on /v1/authorize and the proxy when no api id is given (logged as a warning at start-up)',
  }),
  requirePermissions: option({
    flag: 'require-permissions',
    env: 'AUTHORIZE_PERMISSIONS',
    kind: 'string',
    description: 'comma-separated permissions a key must all have there (header X-Keygate-Permissions overrides)',
  }),
  cost: option({
    flag: 'cost',
    env: 'AUTHORIZE_COST',
    kind: 'int',
    min: 0,
    max: 1_000_000,
    default: 1,
    description: 'credits a request costs there, for keys with credits (header X-Keygate-Cost overrides)',
  }),
  upstream: option({
    flag: 'upstream',
    env: 'UPSTREAM_URL',
    kind: 'http-url',
    description: 'reverse-proxy mode: forward requests whose key verifies to this origin',
  }),
  proxyPort: option({
    flag: 'proxy-port',
    env: 'PROXY_PORT',
    kind: 'port',
    default: 7072,
    description: 'port of the reverse proxy (with --upstream)',
  }),
  upstreamTimeout: option({
    flag: 'upstream-timeout',
    env: 'UPSTREAM_TIMEOUT_MS',
    kind: 'int',
    min: 10,
    max: 600_000,
    default: 30_000,
    description:
      'longest wait for the upstream (then 504), and for a client to take more of its answer (then cut off), ms',
  }),
  upstreamConnections: option({
    flag: 'upstream-connections',
    env: 'UPSTREAM_CONNECTIONS',
    kind: 'int',
    min: 1,
    max: 10_000,
    default: 64,
    description: 'most connections the proxy opens to the upstream',
  }),
  proxyPassAuthorization: option({
    flag: 'proxy-pass-authorization',
    env: 'PROXY_PASS_AUTHORIZATION',
    kind: 'boolean',
    default: false,
    description:
      "reverse proxy: pass the client's Authorization header on to the upstream (unless it holds the key) rather than remove it",
  }),
  managementRateLimit: option({
    flag: 'management-rate-limit',
    env: 'MANAGEMENT_RATE_LIMIT',
    kind: 'int',
    min: 0,
    max: 10_000_000,
    default: 6_000,
    description: 'management calls per root key per minute on each control plane (0 = no limit)',
  }),
  webhookAllowPrivate: (fallback: boolean) =>
    option({
      flag: 'webhook-allow-private',
      env: 'WEBHOOK_ALLOW_PRIVATE',
      kind: 'boolean',
      default: fallback,
      description:
        'let webhook endpoints be on loopback, private and link-local addresses (to deliver inside your own network)',
    }),
  webhookTimeout: option({
    flag: 'webhook-timeout',
    env: 'WEBHOOK_TIMEOUT_MS',
    kind: 'int',
    min: 100,
    max: 60_000,
    default: 10_000,
    description: 'how long a webhook endpoint may take to answer, ms',
  }),
  webhookRetryHours: option({
    flag: 'webhook-retry-hours',
    env: 'WEBHOOK_RETRY_HOURS',
    kind: 'int',
    min: 1,
    max: 720,
    default: 24,
    description: 'how long a failing webhook delivery is retried before it is dead-lettered, hours',
  }),
  webhookRetryMaxDelay: option({
    flag: 'webhook-retry-max-delay',
    env: 'WEBHOOK_RETRY_MAX_DELAY_MS',
    kind: 'int',
    min: 100,
    max: 86_400_000,
    default: 3_600_000,
    description: 'longest wait between two attempts at a webhook delivery (waits double from 1 s), ms',
  }),
  webhookExpiringLead: option({
    flag: 'webhook-expiring-lead-hours',
    env: 'WEBHOOK_EXPIRING_LEAD_HOURS',
    kind: 'int',
    min: 0,
    max: 8_760,
    default: 168,
    description: 'how long before a key expires the key.expiring webhook event is sent, hours',
  }),
  secretScanningKeys: option({
    flag: 'secret-scanning-keys-url',
    env: 'SECRET_SCANNING_KEYS_URL',
    kind: 'string',
    default: 'https://api.github.com/meta/public_keys/secret_scanning',
    description:
      "where the keys that sign GitHub's leak reports are published (http(s) URL), or `off` to not serve /v1/secret-scanning/github",
  }),
  encryptionKeys: option({
    flag: 'encryption-keys',
    env: 'ENCRYPTION_KEYS',
    kind: 'secret',
    min: 1,
    description:
      "keys sealing the secrets kept in the store (meter exports' provider credentials): <id>:<32 bytes in base64>, comma-separated, the first sealing (prefer the environment: flags show in ps)",
  }),
  portalUrl: option({
    flag: 'portal-url',
    env: 'PORTAL_URL',
    kind: 'string',
    description:
      "where your customers reach the portal page (an http(s) URL; portal.createSession answers it with ?code=); default: this server's /portal/ on localhost",
  }),
  analyticsDir: option({
    flag: 'analytics-dir',
    env: 'ANALYTICS_DIR',
    kind: 'string',
    description:
      'where the embedded analytics engine (ClickHouse, through chDB) keeps its data: one control plane per directory; default ./keygate-analytics (keygate dev: a temporary directory, removed at exit)',
  }),
  clickhouseUrl: option({
    flag: 'clickhouse-url',
    env: 'CLICKHOUSE_URL',
    kind: 'string',
    description:
      'a ClickHouse server to keep analytics on instead of the embedded engine (http(s)://user:password@host:8123/database; prefer the environment: flags show in ps); several control planes need one',
  }),
  clickhouseCluster: option({
    flag: 'clickhouse-cluster',
    env: 'CLICKHOUSE_CLUSTER',
    kind: 'string',
    description:
      'the ClickHouse cluster (its remote_servers name) the analytics tables are made on, replicated (with CLICKHOUSE_URL); default: one server',
  }),
  analyticsBuffer: option({
    flag: 'analytics-buffer-mb',
    env: 'ANALYTICS_BUFFER_MB',
    kind: 'int',
    min: 1,
    max: 4_096,
    default: 256,
    description:
      "the most the store's analytics buffer this process appends to may hold, MiB: beyond, its oldest rows are dropped (counted); how long an engine outage it covers: docs/analytics.md",
  }),
  region: option({
    flag: 'region',
    env: 'KEYGATE_REGION',
    kind: 'string',
    description: "this process's name in the analytics rows it records (`region`); default: the host's name",
  }),
  shutdownDelay: option({
    flag: 'shutdown-delay',
    env: 'SHUTDOWN_DELAY_MS',
    kind: 'int',
    min: 0,
    max: 600_000,
    default: 0,
    description:
      "on SIGTERM, time to stay up while not ready before refusing requests, ms (set it to your load balancer's readiness period)",
  }),
  shutdownGrace: option({
    flag: 'shutdown-grace',
    env: 'SHUTDOWN_GRACE_MS',
    kind: 'int',
    min: 0,
    max: 600_000,
    default: 10_000,
    description: 'time to drain requests on SIGTERM, ms',
  }),
}

/** Groups of rows that several commands share, in --help order. */
const redisTarget = [common.redis, common.sentinels, common.sentinelName, common.clusterNodes] as const
const serving = [
  common.logLevel,
  common.bodyLimit,
  common.cacheSize,
  common.unknownSize,
  common.unknownTtl,
  common.pendingReads,
  common.docsUrl,
  common.maxStaleness,
  common.pollInterval,
  common.onStale,
  common.clientAddress,
  common.trustedProxies,
] as const
const gateway = [common.keyHeader, common.apiId, common.anyApi, common.requirePermissions, common.cost] as const
const shutdown = [common.shutdownDelay, common.shutdownGrace] as const
/** `allowPrivate`: WEBHOOK_ALLOW_PRIVATE's default, true for `keygate dev` (a local tool, its receivers local too). */
const webhooks = (allowPrivate: boolean) =>
  [
    common.webhookAllowPrivate(allowPrivate),
    common.webhookTimeout,
    common.webhookRetryHours,
    common.webhookRetryMaxDelay,
    common.webhookExpiringLead,
  ] as const
/** What `keygate root-key …` needs: the store the control plane uses, found as the control plane finds it. */
const rootKeyStore = [...redisTarget, common.waitReplicas, common.waitTimeout] as const

/**
 * Every command's options, in --help order: the one table the parser, --help, check:deploy and the README test read.
 */
export const specs = {
  'control-plane': [
    common.port(7070),
    common.host('0.0.0.0'),
    ...redisTarget,
    common.waitReplicas,
    common.waitTimeout,
    common.rootKey,
    ...serving,
    common.managementRateLimit,
    ...webhooks(false),
    common.secretScanningKeys,
    common.encryptionKeys,
    common.portalUrl,
    common.analyticsDir,
    common.clickhouseUrl,
    common.clickhouseCluster,
    common.analyticsBuffer,
    common.region,
    ...shutdown,
  ] as const,
  verifier: [
    common.port(7071),
    common.host('0.0.0.0'),
    ...redisTarget,
    common.rootKey,
    ...serving,
    ...gateway,
    common.upstream,
    common.proxyPort,
    common.upstreamTimeout,
    common.upstreamConnections,
    common.proxyPassAuthorization,
    common.analyticsBuffer,
    common.region,
    ...shutdown,
  ] as const,
  dev: [
    common.port(7070),
    common.host('127.0.0.1'),
    common.rootKey,
    ...serving,
    ...gateway,
    common.managementRateLimit,
    ...webhooks(true),
    common.secretScanningKeys,
    common.encryptionKeys,
    common.portalUrl,
    common.analyticsDir,
    common.analyticsBuffer,
    common.region,
    ...shutdown,
  ] as const,
  'root-key create': [
    ...rootKeyStore,
    option({
      flag: 'permissions',
      env: 'KEYGATE_PERMISSIONS',
      kind: 'string',
      required: true,
      description: "'*' or a comma-separated list such as api.*.read_key,api.api_x.update_key,rootkey.*.manage",
    }),
    option({
      flag: 'name',
      env: 'KEYGATE_ROOT_KEY_NAME',
      kind: 'string',
      description: 'a name to recognise the root key by',
    }),
  ] as const,
  'root-key list': [
    ...rootKeyStore,
    option({
      flag: 'json',
      env: 'KEYGATE_JSON',
      kind: 'boolean',
      default: false,
      description: 'print a JSON array of {id, name, start, permissions, createdAt, lastUsedAt} instead of a table',
    }),
  ] as const,
  'root-key revoke': rootKeyStore,
  'root-key roll': rootKeyStore,
  'root-key bootstrap disable': rootKeyStore,
  'root-key bootstrap enable': rootKeyStore,
}

export type CommandName = keyof typeof specs

/** An argument a command takes beside its options. */
export interface CommandArgument {
  name: string
  description: string
}

/** The arguments of the commands that take some, in order (every one required). */
export const commandArguments: Partial<Record<CommandName, readonly CommandArgument[]>> = {
  'root-key revoke': [{ name: 'rootKeyId', description: 'the root key to revoke (root_…, as `root-key list` shows)' }],
  'root-key roll': [{ name: 'rootKeyId', description: 'the root key to replace (root_…, as `root-key list` shows)' }],
}

/**
 * The command `argv` starts with (the longest command name its first words spell: `root-key bootstrap disable`)
 * and the words after it; undefined when it names none.
 */
export function commandOf(argv: readonly string[]): { command: CommandName; rest: string[] } | undefined {
  const names = (Object.keys(specs) as CommandName[]).sort((a, b) => b.split(' ').length - a.split(' ').length)
  const command = names.find((name) => name.split(' ').every((word, i) => argv[i] === word))
  return command === undefined ? undefined : { command, rest: argv.slice(command.split(' ').length) }
}
