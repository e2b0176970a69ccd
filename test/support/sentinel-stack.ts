import { startKeygate, type KeygateProcess } from './processes.js'
import { startRedisServer, type RedisServer } from './redis-server.js'
import { startSentinel, type SentinelProcess } from './sentinel.js'
import type { StopAfterAll } from './stop-after-all.js'
import { waitFor } from './wait-for.js'

/** The master's name the sentinels watch. */
export const SENTINEL_NAME = 'kg'
/** The revocation bound the stack's processes keep (MAX_STALENESS_MS). */
export const SENTINEL_BOUND_MS = 2_000
/**
 * What every server of the stack starts with: no delay before a full sync (Redis 7 waits 5 s by default), so that
 * replicas attach at once, also after a failover.
 */
export const REPLICATION_ARGS = ['--repl-diskless-sync-delay', '0']

/** 1 master, 1 replica, 3 sentinels (down-after 1 s), a control plane and a verifier that find Redis through them. */
export interface SentinelStack {
  master: RedisServer
  replica: RedisServer
  sentinels: SentinelProcess[]
  controlPlane: KeygateProcess
  verifier: KeygateProcess
}

/**
 * Starts the stack, each part registered with `stopped` as it starts, and returns once the replica is attached, the
 * sentinels know it and each other (needed to elect a leader for a failover), and both processes are ready. `env` is
 * given to both processes beyond the common settings (later wins).
 */
export async function startSentinelStack(
  stopped: StopAfterAll['stopped'],
  rootKey: string,
  env: Record<string, string> = {},
): Promise<SentinelStack> {
  const master = await stopped(startRedisServer({ args: REPLICATION_ARGS }))
  const replica = await stopped(
    startRedisServer({ args: [...REPLICATION_ARGS, '--replicaof', '127.0.0.1', String(master.port)] }),
  )
  await waitFor(
    async () => (await replica.admin.info('replication')).includes('master_link_status:up'),
    'the replica to attach',
    20_000,
    100,
  )
  const sentinels = await Promise.all(
    Array.from({ length: 3 }, () => stopped(startSentinel(SENTINEL_NAME, master.port))),
  )
  const processEnv = {
    REDIS_URL: 'redis://127.0.0.1:6379',
    REDIS_SENTINELS: sentinels.map((s) => `127.0.0.1:${s.port}`).join(','),
    REDIS_SENTINEL_NAME: SENTINEL_NAME,
    KEYGATE_ROOT_KEY: rootKey,
    LOG_LEVEL: 'warn',
    MAX_STALENESS_MS: String(SENTINEL_BOUND_MS),
    POLL_INTERVAL_MS: '250',
    // Acknowledge a write only once the replica has it: a write the old master takes in the failover window then
    // answers 503 instead of being acknowledged and lost.
    REDIS_WAIT_REPLICAS: '1',
    REDIS_WAIT_TIMEOUT_MS: '500',
    ...env,
  }
  // Keygate starts while the sentinels find each other (their hellos go every 2 s): it only asks them for the master.
  const [controlPlane, verifier] = await Promise.all([
    stopped(startKeygate(['control-plane'], processEnv)),
    stopped(startKeygate(['verifier'], processEnv)),
    waitFor(
      async () => {
        const known = await Promise.all(
          sentinels.map(async (s) => [
            ((await s.client.call('SENTINEL', 'replicas', SENTINEL_NAME)) as unknown[]).length,
            ((await s.client.call('SENTINEL', 'sentinels', SENTINEL_NAME)) as unknown[]).length,
          ]),
        )
        return known.every(([replicas, others]) => replicas === 1 && others === 2)
      },
      'the sentinels to discover the replica and each other',
      20_000,
      100,
    ),
  ])
  return { master, replica, sentinels, controlPlane, verifier }
}

/** Waits until the sentinels name the replica as the master; returns when they did. */
export async function waitForPromotion(stack: SentinelStack): Promise<number> {
  await waitFor(
    async () => {
      const [, port] = (await stack.sentinels[0]!.client.call(
        'SENTINEL',
        'get-master-addr-by-name',
        SENTINEL_NAME,
      )) as [string, string]
      return Number(port) === stack.replica.port
    },
    'the sentinels to promote the replica',
    20_000,
    50,
  )
  return Date.now()
}

/**
 * The control plane's getKey answer for `keyId`. Just after a failover the client may reconnect once more (the
 * sentinels' announcement can arrive after the first write): a 503 then means "retry", so it retries; what must never
 * happen is a 404.
 */
export async function readKey(
  controlPlane: KeygateProcess,
  rootKey: string,
  keyId: string,
): Promise<{ status: number; body: Record<string, any> }> {
  return waitFor(
    async () => {
      const response = await fetch(`${controlPlane.url}/v1/keys.getKey?keyId=${keyId}`, {
        headers: { authorization: `Bearer ${rootKey}` },
      })
      return response.status === 503
        ? undefined
        : { status: response.status, body: (await response.json()) as Record<string, any> }
    },
    `a stable answer for ${keyId}`,
    5_000,
    50,
  )
}
