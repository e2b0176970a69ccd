import { hostname } from 'node:os'
import { parseSealingKeys, type SealingKey } from '../secrets/secret-box.js'
import { rootKeyPermissionProblem } from '../root-keys/root-key-actions.js'
import type { RedisTarget } from '../store/redis/redis-connection.js'
import { parseOptions, type LogLevel, type OptionValues } from './option-spec.js'
import { commandArguments, specs, type CommandName } from './options.js'
import { normalisedEntry } from '../addresses/ip-allowlist.js'
import type {
  CacheSettings,
  ClientAddressSettings,
  GatewayPolicy,
  ProxySettings,
  ReplicationSettings,
  SyncSettings,
  WebhookPolicy,
} from './settings.js'

export { commandArguments, commandOf, specs, type CommandName } from './options.js'

/**
 * The one place that reads process configuration; everything else takes these frozen objects. Values come
 * typed from the option table (options.ts): a number option is a number here, a choice one of its choices.
 */

export interface ServerConfig {
  port: number
  host: string
  logLevel: LogLevel
  bodyLimitBytes: number
  docsBaseUrl: string
  shutdownGraceMs: number
  shutdownDelayMs: number
  cache: Required<CacheSettings>
  sync: SyncSettings
  /** Which address the allow-lists of keys and apis are checked against. */
  clientAddress: ClientAddressSettings
}

/** Where Redis is: one server at redisUrl, or Sentinel or Cluster (redisUrl then gives password, db and TLS). */
export interface RedisConfig {
  redisUrl: string
  redisTarget: RedisTarget | undefined
}

export interface ControlPlaneConfig extends ServerConfig, RedisConfig {
  replication: ReplicationSettings
  rootKey: string | undefined
  /** Management calls per root key per minute (0: no limit). */
  managementRateLimit: number
  webhooks: WebhookPolicy
  /** Where the keys that sign GitHub's leak reports are published; undefined: the route is not served. */
  secretScanningKeysUrl: string | undefined
  /** The keys sealing secrets kept in the store (ENCRYPTION_KEYS), the first sealing; undefined: none configured. */
  sealingKeys: SealingKey[] | undefined
  /** Where customers reach the portal page. */
  portalUrl: string
  /** Where the embedded analytics engine keeps its data. */
  analyticsDir: string
  /** A ClickHouse server analytics are kept on instead (CLICKHOUSE_URL), and the cluster its tables are made on. */
  clickhouse: { url: string; cluster: string | undefined } | undefined
  /** This process's name in analytics rows. */
  region: string
  /** The bound of the analytics buffer it appends to, bytes. */
  analyticsBufferBytes: number
}

export interface VerifierConfig extends ServerConfig, RedisConfig {
  /** KEYGATE_ROOT_KEY: accepted by v2's keys.verifyKey as the control plane accepts it (unless turned off). */
  rootKey: string | undefined
  gateway: GatewayPolicy
  /** Reverse-proxy mode, when UPSTREAM_URL is set. */
  proxy: ProxySettings | undefined
  /** This process's name in analytics rows. */
  region: string
  /** The bound of the analytics buffer it appends to, bytes. */
  analyticsBufferBytes: number
}

export interface DevConfig extends ServerConfig {
  rootKey: string | undefined
  managementRateLimit: number
  gateway: GatewayPolicy
  webhooks: WebhookPolicy
  secretScanningKeysUrl: string | undefined
  /** ENCRYPTION_KEYS; undefined: a key made for this run (dev keeps nothing past it). */
  sealingKeys: SealingKey[] | undefined
  portalUrl: string
  /** Where the embedded analytics engine keeps its data; undefined: a temporary directory, removed at exit. */
  analyticsDir: string | undefined
  region: string
  analyticsBufferBytes: number
}

/** What every `keygate root-key …` command reads: where the store is (as the control plane finds it). */
export interface RootKeyCommandConfig extends RedisConfig {
  replication: ReplicationSettings
}

export interface RootKeyCreateConfig extends RootKeyCommandConfig {
  permissions: string[]
  name: string | undefined
}

export interface RootKeyListConfig extends RootKeyCommandConfig {
  json: boolean
}

/** revoke and roll: the root key they act on. */
export interface RootKeyIdConfig extends RootKeyCommandConfig {
  rootKeyId: string
}

type RootKeyCommand = Extract<CommandName, `root-key ${string}`>

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

// Distributes over a union of commands: a function taking several commands' values reads only what they share.
type Values<C extends CommandName> = C extends CommandName ? OptionValues<(typeof specs)[C]> : never

/** Parses one command's options and the rules that span several; throws every problem at once. */
function read<C extends CommandName>(
  command: C,
  argv: string[],
  env: NodeJS.ProcessEnv,
  // Cross-option rules run even when some rows failed (every problem is listed at once): a failed row is absent.
  extra: (values: Partial<OptionValues<(typeof specs)[C]>>, problems: string[]) => void = () => {},
): OptionValues<(typeof specs)[C]> {
  return readWithArguments(command, argv, env, extra).values
}

/** `read`, with the command's arguments (commandArguments) as well. */
function readWithArguments<C extends CommandName>(
  command: C,
  argv: string[],
  env: NodeJS.ProcessEnv,
  extra: (values: Partial<OptionValues<(typeof specs)[C]>>, problems: string[]) => void = () => {},
): { values: OptionValues<(typeof specs)[C]>; args: string[] } {
  const argNames = (commandArguments[command] ?? []).map((argument) => argument.name)
  const { read, problems, values, args } = parseOptions(specs[command], argv, env, argNames)
  extra(read, problems)
  if (values === undefined || problems.length > 0) throw new ConfigError(problems)
  return { values, args }
}

/**
 * The longest WAIT a Cluster can hold its node connections for, ms. Each of their commands is timed at 2 s by ioredis
 * (redis-connection.ts' commandTimeout) and each is asked PING every second, ended when unanswered for those 2 s
 * (cluster-node-watch.ts): a WAIT that lasted as long would be answered "Command timed out", and would take the PING
 * sent behind it, with its connection, for stranded. The rest leaves room for the round trip.
 */
const CLUSTER_WAIT_TIMEOUT_MAX_MS = 1_500

/** Sentinel and Cluster seed lists: host:port,… and not both; on a Cluster, a WAIT its connections can wait out. */
function checkRedisTarget(
  values: {
    'redis-sentinels'?: string | undefined
    'redis-cluster-nodes'?: string | undefined
    'redis-wait-replicas'?: number | undefined
    'redis-wait-timeout'?: number | undefined
  },
  problems: string[],
): void {
  for (const [list, env] of [
    [values['redis-sentinels'], 'REDIS_SENTINELS'],
    [values['redis-cluster-nodes'], 'REDIS_CLUSTER_NODES'],
  ] as const) {
    for (const address of list?.split(',') ?? []) {
      if (!/^[^\s:,]+:\d{1,5}$/.test(address.trim()))
        problems.push(`${env}: ${JSON.stringify(address)} is not host:port`)
    }
  }
  if (values['redis-sentinels'] !== undefined && values['redis-cluster-nodes'] !== undefined) {
    problems.push('REDIS_SENTINELS and REDIS_CLUSTER_NODES: give one or the other')
  }
  const { 'redis-wait-timeout': waitTimeout = 0, 'redis-wait-replicas': waitReplicas = 0 } = values
  if (values['redis-cluster-nodes'] !== undefined && waitReplicas > 0 && waitTimeout > CLUSTER_WAIT_TIMEOUT_MAX_MS) {
    problems.push(
      `REDIS_WAIT_TIMEOUT_MS (${waitTimeout}) must be at most ${CLUSTER_WAIT_TIMEOUT_MAX_MS} on a Cluster (REDIS_CLUSTER_NODES) when writes wait for replicas: the 2 s command timeout would end a longer WAIT, and its connection as stranded`,
    )
  }
}

/** One slow poll must not break the bound. */
function checkPollInterval(
  values: { 'poll-interval'?: number | undefined; 'max-staleness'?: number | undefined },
  problems: string[],
): void {
  const { 'poll-interval': poll, 'max-staleness': bound } = values
  if (poll !== undefined && bound !== undefined && poll * 2 > bound) {
    problems.push(
      `POLL_INTERVAL_MS (${poll}) must be at most half of MAX_STALENESS_MS (${bound}), or one slow poll breaks the bound`,
    )
  }
}

/** TRUSTED_PROXIES: ranges, given exactly when CLIENT_ADDRESS is `forwarded`. */
function checkClientAddress(
  values: { 'client-address'?: 'socket' | 'forwarded' | undefined; 'trusted-proxies'?: string | undefined },
  problems: string[],
): void {
  const proxies = values['trusted-proxies']
  for (const entry of splitRanges(proxies)) {
    if (normalisedEntry(entry) === undefined)
      problems.push(`TRUSTED_PROXIES: ${JSON.stringify(entry)} is not an IP address or CIDR range`)
  }
  if (values['client-address'] === 'forwarded' && splitRanges(proxies).length === 0) {
    problems.push(
      'TRUSTED_PROXIES (--trusted-proxies) is required with CLIENT_ADDRESS=forwarded: the addresses or ranges of the proxies whose X-Forwarded-For is believed',
    )
  }
  if (values['client-address'] === 'socket' && proxies !== undefined) {
    problems.push(
      'TRUSTED_PROXIES is read only with CLIENT_ADDRESS=forwarded: set that too, or leave TRUSTED_PROXIES out',
    )
  }
}

const splitRanges = (list: string | undefined) =>
  (list ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)

function serverConfig(values: Values<'control-plane' | 'verifier' | 'dev'>): ServerConfig {
  return {
    port: values.port,
    host: values.host,
    logLevel: values['log-level'],
    bodyLimitBytes: values['body-limit'],
    docsBaseUrl: values['docs-url'].replace(/\/+$/, ''),
    shutdownGraceMs: values['shutdown-grace'],
    shutdownDelayMs: values['shutdown-delay'],
    cache: {
      maxKeys: values['cache-size'],
      maxUnknown: values['unknown-cache-size'],
      unknownTtlMs: values['unknown-cache-ttl'],
      maxPendingReads: values['max-pending-reads'],
    },
    sync: {
      maxStalenessMs: values['max-staleness'],
      pollIntervalMs: values['poll-interval'],
      onStale: values['on-stale'],
    },
    clientAddress: Object.freeze({
      mode: values['client-address'],
      // Checked by checkClientAddress: every entry is a range.
      trustedProxies: Object.freeze(splitRanges(values['trusted-proxies']).map((entry) => normalisedEntry(entry)!)),
    }),
  }
}

const addresses = (list: string) =>
  list.split(',').map((address) => {
    const [host = '', port = ''] = address.trim().split(':')
    return { host, port: Number(port) }
  })

/**
 * How long a write waits for replicas: REDIS_WAIT_REPLICAS, or one replica behind Sentinel (which exists to fail over,
 * and a failover loses what no replica had) and none otherwise.
 */
function replicationOf(values: Values<'control-plane' | RootKeyCommand>): ReplicationSettings {
  return {
    waitReplicas: values['redis-wait-replicas'] ?? (values['redis-sentinels'] !== undefined ? 1 : 0),
    timeoutMs: values['redis-wait-timeout'],
  }
}

function redisConfig(values: Values<'control-plane' | 'verifier' | RootKeyCommand>): RedisConfig {
  const sentinels = values['redis-sentinels']
  const clusterNodes = values['redis-cluster-nodes']
  const redisTarget: RedisTarget | undefined =
    clusterNodes !== undefined
      ? { cluster: addresses(clusterNodes) }
      : sentinels !== undefined
        ? { sentinel: { sentinels: addresses(sentinels), name: values['redis-sentinel-name'] } }
        : undefined
  return { redisUrl: values.redis, redisTarget }
}

function gatewayPolicy(values: Values<'verifier' | 'dev'>): GatewayPolicy {
  const permissions = values['require-permissions']
    ?.split(',')
    .map((p) => p.trim())
    .filter(Boolean)
  return {
    keyHeader: values['key-header'].toLowerCase(),
    apiId: values['api-id'],
    anyApi: values['any-api'],
    permissions: permissions && permissions.length > 0 ? permissions : undefined,
    cost: values.cost,
  }
}

const serverChecks = (values: Partial<Values<'control-plane' | 'verifier'>>, problems: string[]) => {
  checkRedisTarget(values, problems)
  checkPollInterval(values, problems)
  checkClientAddress(values, problems)
}

/** Which api forward-auth and the proxy guard: one api, or every api by the operator's explicit word. */
function checkGatewayApi(
  values: { 'api-id'?: string | undefined; 'any-api'?: boolean | undefined; upstream?: string | undefined },
  problems: string[],
): void {
  if (values['api-id'] !== undefined && values['any-api'] === true) {
    problems.push('AUTHORIZE_API_ID and AUTHORIZE_ANY_API: give one or the other')
  }
  // The proxy has no gateway to name the api per request: it must know it from the start.
  if (values.upstream !== undefined && values['api-id'] === undefined && values['any-api'] === false) {
    problems.push(
      // Named first: check:deploy drops a problem that starts with a variable it cannot read (from a Secret).
      'AUTHORIZE_API_ID (--api-id) is required in reverse-proxy mode (UPSTREAM_URL): set it to the api the keys must belong to, or AUTHORIZE_ANY_API=true (--any-api) to accept keys of every api',
    )
  }
}

/** SECRET_SCANNING_KEYS_URL: `off`, or where the keys are published (http(s)). */
function checkSecretScanningKeys(values: { 'secret-scanning-keys-url'?: string | undefined }, problems: string[]) {
  const raw = values['secret-scanning-keys-url']
  if (raw === undefined || raw === 'off') return
  let ok = false
  try {
    ok = ['http:', 'https:'].includes(new URL(raw).protocol)
  } catch {
    // not a URL: the problem below
  }
  if (!ok)
    problems.push(
      `SECRET_SCANNING_KEYS_URL (--secret-scanning-keys-url) must be an http(s) URL or off, got ${JSON.stringify(raw)}`,
    )
}

/** PORTAL_URL: an absolute http(s) URL. */
function checkPortalUrl(values: { 'portal-url'?: string | undefined }, problems: string[]) {
  const raw = values['portal-url']
  if (raw === undefined) return
  let ok = false
  try {
    ok = ['http:', 'https:'].includes(new URL(raw).protocol)
  } catch {
    // not a URL: the problem below
  }
  if (!ok) problems.push(`PORTAL_URL (--portal-url) must be an http(s) URL, got ${JSON.stringify(raw)}`)
}

/** Where customers reach the portal: PORTAL_URL, or this server's /portal/ on localhost (right for `keygate dev`). */
const portalUrl = (values: { 'portal-url'?: string | undefined; port: number }) =>
  values['portal-url'] ?? `http://localhost:${values.port}/portal/`

/** ENCRYPTION_KEYS, read whole; its problems never repeat it (it is a secret). */
function checkEncryptionKeys(read: { 'encryption-keys'?: string | undefined }, problems: string[]): void {
  const raw = read['encryption-keys']
  if (raw === undefined) return
  const keys = parseSealingKeys(raw)
  if (typeof keys === 'string') problems.push(`ENCRYPTION_KEYS (--encryption-keys): ${keys}`)
}

const sealingKeys = (values: { 'encryption-keys'?: string | undefined }): SealingKey[] | undefined => {
  const raw = values['encryption-keys']
  if (raw === undefined) return undefined
  const keys = parseSealingKeys(raw)
  if (typeof keys === 'string') throw new ConfigError([`ENCRYPTION_KEYS (--encryption-keys): ${keys}`])
  return keys
}

const secretScanningKeysUrl = (values: { 'secret-scanning-keys-url': string }) =>
  values['secret-scanning-keys-url'] === 'off' ? undefined : values['secret-scanning-keys-url']

/** CLICKHOUSE_URL is ClickHouse's HTTP interface; the message never repeats it (it may hold a password). */
function checkClickhouse(
  read: { 'clickhouse-url'?: string | undefined; 'clickhouse-cluster'?: string | undefined },
  problems: string[],
): void {
  const raw = read['clickhouse-url']
  if (raw !== undefined) {
    let ok = false
    let path = '/'
    try {
      const url = new URL(raw)
      ok = url.protocol === 'http:' || url.protocol === 'https:'
      path = url.pathname
    } catch {
      // not a URL: the problem below
    }
    if (!ok)
      problems.push(
        'CLICKHOUSE_URL (--clickhouse-url) must be an http(s) URL such as http://user:password@clickhouse:8123/keygate',
      )
    // The path names the database, whole: `/keygate/` would be a database named `keygate/`.
    else if (path !== '/' && !/^\/[^/]+$/.test(path))
      problems.push(
        `CLICKHOUSE_URL (--clickhouse-url)'s path names its database: one name such as /keygate, got ${JSON.stringify(path)}`,
      )
  }
  if (read['clickhouse-cluster'] !== undefined && raw === undefined)
    problems.push('CLICKHOUSE_CLUSTER (--clickhouse-cluster) needs CLICKHOUSE_URL: the embedded engine has no cluster')
}

export function controlPlaneConfig(argv: string[], env: NodeJS.ProcessEnv): Readonly<ControlPlaneConfig> {
  const values = read('control-plane', argv, env, (read, problems) => {
    serverChecks(read, problems)
    checkEncryptionKeys(read, problems)
    checkSecretScanningKeys(read, problems)
    checkPortalUrl(read, problems)
    checkClickhouse(read, problems)
  })
  return Object.freeze({
    ...serverConfig(values),
    ...redisConfig(values),
    rootKey: values['root-key'],
    replication: replicationOf(values),
    managementRateLimit: values['management-rate-limit'],
    webhooks: webhookPolicy(values),
    secretScanningKeysUrl: secretScanningKeysUrl(values),
    sealingKeys: sealingKeys(values),
    portalUrl: portalUrl(values),
    analyticsDir: values['analytics-dir'] ?? 'keygate-analytics',
    clickhouse:
      values['clickhouse-url'] === undefined
        ? undefined
        : { url: values['clickhouse-url'], cluster: values['clickhouse-cluster'] },
    region: values.region ?? hostname(),
    analyticsBufferBytes: values['analytics-buffer-mb'] * 1024 * 1024,
  })
}

export function verifierConfig(argv: string[], env: NodeJS.ProcessEnv): Readonly<VerifierConfig> {
  const values = read('verifier', argv, env, (read, problems) => {
    serverChecks(read, problems)
    checkGatewayApi(read, problems)
  })
  const proxy =
    values.upstream === undefined
      ? undefined
      : {
          upstreamUrl: values.upstream,
          port: values['proxy-port'],
          timeoutMs: values['upstream-timeout'],
          connections: values['upstream-connections'],
          passAuthorization: values['proxy-pass-authorization'],
        }
  return Object.freeze({
    ...serverConfig(values),
    ...redisConfig(values),
    rootKey: values['root-key'],
    gateway: gatewayPolicy(values),
    proxy,
    region: values.region ?? hostname(),
    analyticsBufferBytes: values['analytics-buffer-mb'] * 1024 * 1024,
  })
}

export function devConfig(argv: string[], env: NodeJS.ProcessEnv): Readonly<DevConfig> {
  const values = read('dev', argv, env, (read, problems) => {
    checkPollInterval(read, problems)
    checkEncryptionKeys(read, problems)
    checkGatewayApi(read, problems)
    checkSecretScanningKeys(read, problems)
    checkPortalUrl(read, problems)
    checkClientAddress(read, problems)
  })
  return Object.freeze({
    ...serverConfig(values),
    rootKey: values['root-key'],
    gateway: gatewayPolicy(values),
    managementRateLimit: values['management-rate-limit'],
    webhooks: webhookPolicy(values),
    secretScanningKeysUrl: secretScanningKeysUrl(values),
    sealingKeys: sealingKeys(values),
    portalUrl: portalUrl(values),
    analyticsDir: values['analytics-dir'],
    region: values.region ?? hostname(),
    analyticsBufferBytes: values['analytics-buffer-mb'] * 1024 * 1024,
  })
}

const HOUR_MS = 3_600_000

function webhookPolicy(values: Values<'control-plane' | 'dev'>): WebhookPolicy {
  return {
    allowPrivateAddresses: values['webhook-allow-private'],
    timeoutMs: values['webhook-timeout'],
    retryWindowMs: values['webhook-retry-hours'] * HOUR_MS,
    retryMaxDelayMs: values['webhook-retry-max-delay'],
    expiringLeadMs: values['webhook-expiring-lead-hours'] * HOUR_MS,
  }
}

function rootKeyCommandConfig(values: Values<RootKeyCommand>): RootKeyCommandConfig {
  return {
    ...redisConfig(values),
    replication: replicationOf(values),
  }
}

export function rootKeyCreateConfig(argv: string[], env: NodeJS.ProcessEnv): Readonly<RootKeyCreateConfig> {
  let permissions: string[] = []
  const values = read('root-key create', argv, env, (raw, problems) => {
    checkRedisTarget(raw, problems)
    permissions = (raw.permissions ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)
    for (const permission of permissions) {
      const problem = rootKeyPermissionProblem(permission)
      if (problem) problems.push(`--permissions: ${problem}`)
    }
    if (raw.permissions !== undefined && permissions.length === 0) problems.push('--permissions: give at least one')
  })
  return Object.freeze({ ...rootKeyCommandConfig(values), permissions, name: values.name })
}

export function rootKeyListConfig(argv: string[], env: NodeJS.ProcessEnv): Readonly<RootKeyListConfig> {
  const values = read('root-key list', argv, env, checkRedisTarget)
  return Object.freeze({ ...rootKeyCommandConfig(values), json: values.json })
}

/** `keygate root-key revoke|roll <rootKeyId>`. */
export function rootKeyIdConfig(
  command: 'root-key revoke' | 'root-key roll',
  argv: string[],
  env: NodeJS.ProcessEnv,
): Readonly<RootKeyIdConfig> {
  const { values, args } = readWithArguments(command, argv, env, checkRedisTarget)
  return Object.freeze({ ...rootKeyCommandConfig(values), rootKeyId: args[0]! })
}

/** `keygate root-key bootstrap disable|enable`: only where the store is. */
export function rootKeyBootstrapConfig(
  command: 'root-key bootstrap disable' | 'root-key bootstrap enable',
  argv: string[],
  env: NodeJS.ProcessEnv,
): Readonly<RootKeyCommandConfig> {
  return Object.freeze(rootKeyCommandConfig(read(command, argv, env, checkRedisTarget)))
}
