import { newId } from '../../shared/ids.js'
import type { VerifiedKey } from '../../shared/analytics/analytics-recorder.js'
import type { VerdictCode } from '../../shared/verification/verification.js'
import type { VerificationSource } from '../../shared/verification/verification-source.js'

/**
 * The verifications bench:analytics records and stores: one workspace's traffic over APIS apis and KEYS keys, as the
 * recorder records it (sample) and as the engine generates it (generatedRowsSql), from the same tables of weights.
 * Keys are not all alike, as a few customers make most calls: a verification is of the key at index ⌊u² × KEYS⌋ for a
 * uniform u (the first key takes 1 % of the traffic, the median one a 140th of that). A key's api is its index modulo
 * APIS, and every other key belongs to an identity (five keys each).
 */
export const APIS = 10
export const KEYS = 10_000
const KEYS_PER_IDENTITY = 5

/** Outcomes by share of verifications, most common first (they sum to 1). */
const OUTCOMES: readonly (readonly [VerdictCode, number])[] = [
  ['VALID', 0.9],
  ['RATE_LIMITED', 0.05],
  ['USAGE_EXCEEDED', 0.02],
  ['DISABLED', 0.01],
  ['FORBIDDEN', 0.01],
  ['EXPIRED', 0.005],
  ['INSUFFICIENT_PERMISSIONS', 0.005],
]
/** Where verifications were asked, by share. */
const SOURCES: readonly (readonly [VerificationSource, number])[] = [
  ['v1.verifyKey', 0.5],
  ['v2.verifyKey', 0.3],
  ['authorize', 0.1],
  ['proxy', 0.1],
]
/** The tags callers send, by share: half send none. */
const TAGS: readonly (readonly [readonly string[], number])[] = [
  [[], 0.5],
  [['path=/v1/orders'], 0.3],
  [['path=/v1/users', 'plan=pro'], 0.15],
  [['path=/v1/search', 'plan=free', 'client=cli'], 0.05],
]
/** The verifiers recording, by share (their `region`: the host's name). */
const REGIONS: readonly (readonly [string, number])[] = [
  ['verifier-7d9f-a', 0.4],
  ['verifier-7d9f-b', 0.4],
  ['verifier-7d9f-c', 0.2],
]
/** Keys carrying credits (every fourth) spend one per valid verification. */
const CREDIT_KEY_EVERY = 4

export interface TrafficKey extends VerifiedKey {
  identityId: string | undefined
}

/** The workspace's apis and keys, with ids made as the control plane makes them. */
export interface Traffic {
  apis: string[]
  keys: TrafficKey[]
}

/**
 * The workspace's apis, identities and keys, each id made as the control plane makes it, at an instant of its own over
 * the year before `nowMs` (ids made in one millisecond would share all but their last digits, and compress as no real
 * workspace's do).
 */
export function makeTraffic(nowMs: number): Traffic {
  const YEAR_MS = 365 * 86_400_000
  const idOf = (prefix: 'api' | 'id' | 'key', i: number, of: number) =>
    newId(prefix, nowMs - YEAR_MS + Math.floor((i * YEAR_MS) / of))
  const apis = Array.from({ length: APIS }, (_, i) => idOf('api', i, APIS))
  const identityCount = Math.ceil(KEYS / 2 / KEYS_PER_IDENTITY)
  const identities = Array.from({ length: identityCount }, (_, i) => ({
    id: idOf('id', i, identityCount),
    externalId: `customer_${i}`,
  }))
  const keys = Array.from({ length: KEYS }, (_, i): TrafficKey => {
    const identity = i % 2 === 0 ? identities[Math.floor(i / 2 / KEYS_PER_IDENTITY)] : undefined
    return { id: idOf('key', i, KEYS), apiId: apis[i % APIS]!, identityId: identity?.id, ownerId: identity?.externalId }
  })
  return { apis, keys }
}

/** The index of the key a uniform draw `u` in [0, 1) verifies. */
const keyIndexOf = (u: number) => Math.floor(u * u * KEYS)

function pick<T>(table: readonly (readonly [T, number])[], u: number): T {
  let sum = 0
  for (const [value, share] of table) {
    sum += share
    if (u < sum) return value
  }
  return table.at(-1)![0]
}

/** One verification, drawn with `random` (uniform in [0, 1)): what the recorder is called with for it. */
export function sample(
  traffic: Traffic,
  random: () => number,
): {
  key: TrafficKey
  code: VerdictCode
  source: VerificationSource
  tags: readonly string[] | undefined
  spent: number
  latencyMs: number
} {
  const index = keyIndexOf(random())
  const code = pick(OUTCOMES, random())
  const tags = pick(TAGS, random())
  return {
    key: traffic.keys[index]!,
    code,
    source: pick(SOURCES, random()),
    tags: tags.length === 0 ? undefined : tags,
    spent: index % CREDIT_KEY_EVERY === 0 && code === 'VALID' ? 1 : 0,
    latencyMs: 0.005 + random() * 0.2,
  }
}

/** The recording processes' names, for the recorders that record the traffic (one each). */
export const regionsOf = (): string[] => REGIONS.map(([region]) => region)

const sqlString = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
const sqlArray = (values: readonly string[]) => `[${values.map(sqlString).join(', ')}]`

/** A multiIf over the uniform draw `u` choosing from a table of shares; each value given as SQL. */
function pickSql<T>(table: readonly (readonly [T, number])[], u: string, sql: (value: T) => string): string {
  let sum = 0
  const arms = table.slice(0, -1).map(([value, share]) => {
    sum += share
    return `${u} < ${sum.toFixed(6)}, ${sql(value)}`
  })
  return `multiIf(${arms.join(', ')}, ${sql(table.at(-1)![0])})`
}

/** The table generatedRowsSql reads the keys from (the statement would be too long to hold them). */
export const TRAFFIC_KEYS_TABLE = 'bench_traffic_keys'

/** The statement that makes TRAFFIC_KEYS_TABLE, and its rows: every key by its index. */
export function trafficKeysTable(traffic: Traffic): { create: string; rows: object[] } {
  return {
    create:
      `CREATE TABLE IF NOT EXISTS \`${TRAFFIC_KEYS_TABLE}\` ` +
      '(i UInt32, key_id String, api_id String, identity_id String, external_id String) ENGINE = Memory',
    rows: traffic.keys.map((key, i) => ({
      i,
      key_id: key.id,
      api_id: key.apiId,
      identity_id: key.identityId ?? '',
      external_id: key.ownerId ?? '',
    })),
  }
}

/**
 * An INSERT … SELECT that generates rows `first` … `first + count - 1` of the traffic into `table`
 * (key_verifications_v1) inside the engine, as if recorded over the `days` days before `nowMs`: each row drawn as
 * sample() draws it (the engine's own random numbers), its keys read from TRAFFIC_KEYS_TABLE, its request_id shaped
 * as the ingest makes them. Inserted as one statement, its rows go through the materialized views as an ingest's do.
 */
export function generatedRowsSql(
  table: string,
  workspaceId: string,
  first: number,
  count: number,
  nowMs: number,
  days: number,
): string {
  const column = (name: string) =>
    `(SELECT groupArray(${name}) FROM (SELECT ${name} FROM \`${TRAFFIC_KEYS_TABLE}\` ORDER BY i))`
  const key = (field: string) => `${field}[k + 1]`
  // Each draw once per row, by name: a draw a multiIf compares at every arm must be one value.
  const draws = [1, 2, 3, 4, 5, 6, 7].map((n) => `randCanonical(${n}) AS u${n}`).join(', ')
  const columns = [
    `concat('vr_', toString(number % 8), '_', toString(t - t % 2000), '-0-', toString(number % 20000)) AS request_id`,
    't AS time',
    `${sqlString(workspaceId)} AS workspace_id`,
    `${key('key_apis')} AS key_space_id`,
    `${key('key_identities')} AS identity_id`,
    `${key('key_owners')} AS external_id`,
    `${key('key_ids')} AS key_id`,
    `${pickSql(OUTCOMES, 'u3', sqlString)} AS outcome`,
    `${pickSql(TAGS, 'u4', sqlArray)} AS tags`,
    `${pickSql(SOURCES, 'u5', sqlString)} AS source`,
    `${pickSql(REGIONS, 'u6', sqlString)} AS region`,
    `if(k % ${CREDIT_KEY_EVERY} = 0 AND outcome = 'VALID', 1, 0) AS spent_credits`,
    `round(0.005 + u7 * 0.2, 3) AS latency`,
  ]
  return (
    `INSERT INTO \`${table}\` (${columns.map((c) => c.slice(c.lastIndexOf(' AS ') + 4)).join(', ')}) ` +
    `WITH ${column('key_id')} AS key_ids, ${column('api_id')} AS key_apis, ` +
    `${column('identity_id')} AS key_identities, ${column('external_id')} AS key_owners ` +
    `SELECT ${columns.join(', ')} ` +
    `FROM (SELECT number, ${draws}, toUInt32(floor(pow(u1, 2) * ${KEYS})) AS k, ` +
    `toInt64(${nowMs}) - toInt64(u2 * ${days * 86_400_000}) AS t FROM numbers(${first}, ${count}))`
  )
}
