import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { runKeygate, startKeygate, type KeygateProcess } from '../support/processes.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { nothingHappensFor } from '../support/nothing-happens.js'
import { pollUntil, waitFor } from '../support/wait-for.js'

/**
 * The revocation guarantee, proven against real processes and a real Redis under each failure mode:
 * once a disable has answered 200, the verifier never answers valid:true more than MAX_STALENESS_MS later.
 * Each mode prints its worst disable→deny time.
 */
const MAX_STALENESS_MS = 2_000
/** How long a poll for a verdict may run: past the bound, a sample's own check has already failed it. */
const POLL_TIMEOUT_MS = MAX_STALENESS_MS + 5_000
const POLL_INTERVAL_MS = 250
/**
 * How soon a healthy verifier denies, by pub/sub. Its stack polls every MAX_STALENESS_MS / 2, so that a verifier that
 * missed the event (polling alone) lands beyond this as a rule, not within it.
 */
const PUBSUB_MS = 250
const HEALTHY_POLL_INTERVAL_MS = MAX_STALENESS_MS / 2
const ROOT_KEY = 'bound-test-root-key-0123456789'
const results: { mode: string; worstMs: number; runs: number }[] = []

interface Stack {
  redis: RedisServer
  controlPlane: KeygateProcess
  verifier: KeygateProcess
  /** More verifiers, when asked for: each a sidecar of its own. */
  others: KeygateProcess[]
}

const running: { stop(): Promise<unknown> }[] = []
afterEach(async () => {
  await Promise.all(
    running
      .splice(0)
      .reverse()
      .map((p) => p.stop()),
  )
})
/** The stacks of sharedStack, stopped once the file is done. */
const sharedRunning: { stop(): Promise<unknown> }[] = []
afterAll(async () => {
  await Promise.all(sharedRunning.splice(0).map((p) => p.stop()))
})
afterAll(() => {
  const table = results.map(
    (r) =>
      `  ${r.mode.padEnd(42)} worst ${String(r.worstMs.toFixed(1)).padStart(7)} ms over ${r.runs} disables (bound ${MAX_STALENESS_MS} ms)`,
  )
  console.log(`disable→deny on the verifier, per failure mode:\n${table.join('\n')}`)
})

interface StackOptions {
  redisArgs?: string[]
  pollIntervalMs?: number
  verifierUser?: string
  verifiers?: number
  verifierRootKey?: boolean
}

/** A Redis, a control plane and the verifiers, stopped after the test (or with `owner`'s list). */
async function stack(options: StackOptions = {}, owner = running): Promise<Stack> {
  const redis = await startRedisServer({ args: options.redisArgs })
  owner.push({ stop: () => redis.stop() })
  let verifierUrl = redis.url
  if (options.verifierUser) {
    await redis.admin.call('ACL', 'SETUSER', options.verifierUser, 'on', '>verifier-password', '~*', '&*', '+@all')
    verifierUrl = `redis://${options.verifierUser}:verifier-password@127.0.0.1:${redis.port}`
  }
  const env = {
    MAX_STALENESS_MS: String(MAX_STALENESS_MS),
    POLL_INTERVAL_MS: String(options.pollIntervalMs ?? POLL_INTERVAL_MS),
    LOG_LEVEL: 'warn',
  }
  // KEYGATE_ROOT_KEY on the verifiers too when asked (v2's verifyKey accepts it there unless it is turned off).
  const verifierEnv = {
    ...env,
    REDIS_URL: verifierUrl,
    ...(options.verifierRootKey ? { KEYGATE_ROOT_KEY: ROOT_KEY } : {}),
  }
  // Started side by side (start-up is most of each test's time): each needs only Redis, and the test begins once
  // every one is ready.
  const started = (args: string[], processEnv: Record<string, string>) =>
    startKeygate(args, processEnv).then((keygate) => {
      owner.push(keygate)
      return keygate
    })
  const [controlPlane, verifier, ...others] = await Promise.all([
    started(['control-plane'], { ...env, REDIS_URL: redis.url, KEYGATE_ROOT_KEY: ROOT_KEY }),
    ...Array.from({ length: options.verifiers ?? 1 }, () => started(['verifier'], verifierEnv)),
  ])
  return { redis, controlPlane, verifier: verifier!, others }
}

/**
 * The healthy stack, or the one whose Redis refuses PUBLISH, each with two verifiers: started by the first test that
 * asks, for every test that changes nothing of its failure mode (each makes its own keys, roles and root keys), and
 * stopped after the file.
 */
const sharedStacks = new Map<string, Promise<Stack>>()
function sharedStack(mode: 'healthy' | 'PUBLISH refused'): Promise<Stack> {
  let shared = sharedStacks.get(mode)
  if (!shared) {
    const pollIntervalMs = mode === 'healthy' ? HEALTHY_POLL_INTERVAL_MS : POLL_INTERVAL_MS
    shared = stack({ verifiers: 2, pollIntervalMs }, sharedRunning).then(async (s) => {
      if (mode === 'PUBLISH refused') await s.redis.admin.call('ACL', 'SETUSER', 'default', '-publish')
      return s
    })
    sharedStacks.set(mode, shared)
  }
  return shared
}

async function post(base: string, path: string, body: unknown, auth = true) {
  const response = await fetch(`${base}/v1/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${ROOT_KEY}` } : {}) },
    body: JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

/** A key that the verifier has cached as valid. */
async function cachedKey(s: Stack): Promise<{ keyId: string; key: string }> {
  const api = await post(s.controlPlane.url, 'apis.createApi', { name: 'bound' })
  const created = await post(s.controlPlane.url, 'keys.createKey', { apiId: api.body.apiId })
  const { keyId, key } = created.body as { keyId: string; key: string }
  expect((await post(s.verifier.url, 'keys.verifyKey', { key }, false)).body.valid).toBe(true)
  return { keyId, key }
}

/**
 * Disables the key (after `before`), then asks the verifier every few ms until it denies. Every valid:true (or
 * closed 503) must come within the bound of the disable's 200; returns how long the verifier took to deny.
 */
async function disableToDeny(
  s: Stack,
  key: { keyId: string; key: string },
  disable?: () => Promise<void>,
): Promise<number> {
  if (disable) await disable()
  else expect((await post(s.controlPlane.url, 'keys.updateKey', { keyId: key.keyId, enabled: false })).status).toBe(200)
  const answeredAt = performance.now()
  const denied = await pollUntil(
    async () => {
      const verdict = await post(s.verifier.url, 'keys.verifyKey', { key: key.key }, false)
      const elapsed = performance.now() - answeredAt
      if (verdict.status === 200 && verdict.body.valid === false) {
        expect(verdict.body.code).toBe('DISABLED')
        return { elapsed }
      }
      // Closed (503) is allowed: a verifier that has not yet confirmed its cache again after Redis came back refuses
      // rather than answer from it — never valid:true past the bound either way.
      if (verdict.status === 503) expect(verdict.body.error.code).toBe('UNAVAILABLE')
      else expect(verdict.body.valid, `valid:true ${elapsed.toFixed(0)} ms after the disable answered`).toBe(true)
      expect(elapsed).toBeLessThanOrEqual(MAX_STALENESS_MS)
      return undefined
    },
    'the verifier to deny the disabled key',
    POLL_TIMEOUT_MS,
    5,
  )
  return denied.elapsed
}

function record(mode: string, times: number[]) {
  results.push({ mode, worstMs: Math.max(...times), runs: times.length })
  for (const t of times) expect(t).toBeLessThanOrEqual(MAX_STALENESS_MS)
}

/**
 * A key that holds `reports.read` only through a role, cached as valid by every verifier with that query; `revoke`
 * then takes it away through the role or the permission, and every verifier must deny within the bound.
 */
async function roleGrantToDeny(s: Stack, revoke: (ids: { roleId: string; permissionId: string }) => Promise<void>) {
  const suffix = Math.random().toString(36).slice(2, 10)
  const permission = await post(s.controlPlane.url, 'permissions.createPermission', { name: `reports.read.${suffix}` })
  const role = await post(s.controlPlane.url, 'permissions.createRole', {
    name: `analyst-${suffix}`,
    permissions: [{ id: permission.body.permissionId }],
  })
  const api = await post(s.controlPlane.url, 'apis.createApi', { name: 'bound' })
  const { key } = (
    await post(s.controlPlane.url, 'keys.createKey', { apiId: api.body.apiId, roles: [`analyst-${suffix}`] })
  ).body as { key: string }
  const query = { key, authorization: { permissions: `reports.read.${suffix}` } }
  const verifiers = [s.verifier, ...s.others]
  for (const v of verifiers) expect((await post(v.url, 'keys.verifyKey', query, false)).body.valid).toBe(true)
  await revoke({ roleId: role.body.roleId, permissionId: permission.body.permissionId })
  const answeredAt = performance.now()
  const denied = await Promise.all(
    verifiers.map(async (v) => {
      const denial = await pollUntil(
        async () => {
          const verdict = await post(v.url, 'keys.verifyKey', query, false)
          const elapsed = performance.now() - answeredAt
          if (verdict.status === 200 && verdict.body.valid === false) {
            expect(verdict.body.code).toBe('INSUFFICIENT_PERMISSIONS')
            return { elapsed }
          }
          expect(verdict.body.valid, `valid:true ${elapsed.toFixed(0)} ms after the change answered`).toBe(true)
          expect(elapsed).toBeLessThanOrEqual(MAX_STALENESS_MS)
          return undefined
        },
        'the verifier to deny the permission',
        POLL_TIMEOUT_MS,
        5,
      )
      return denial.elapsed
    }),
  )
  return Math.max(...denied)
}

describe('revocation bound for what a role grants (two verifiers, real Redis, real processes)', () => {
  const revocations = (s: Stack) => [
    async ({ roleId }: { roleId: string }) =>
      expect(
        (await post(s.controlPlane.url, 'permissions.setRolePermissions', { roleId, permissions: [] })).status,
      ).toBe(200),
    async ({ permissionId }: { permissionId: string }) =>
      expect((await post(s.controlPlane.url, 'permissions.deletePermission', { permissionId })).status).toBe(200),
    async ({ roleId }: { roleId: string }) =>
      expect((await post(s.controlPlane.url, 'permissions.deleteRole', { roleId })).status).toBe(200),
  ]

  it('healthy: the role loses the permission, the permission or the role is deleted; both deny at once', async () => {
    const s = await sharedStack('healthy')
    const times: number[] = []
    for (const revoke of revocations(s)) times.push(await roleGrantToDeny(s, revoke))
    record('role grant, healthy (2 verifiers)', times)
    expect(Math.max(...times)).toBeLessThan(PUBSUB_MS)
  })

  it('PUBLISH refused: both verifiers learn it from the shard logs within the bound', async () => {
    const s = await sharedStack('PUBLISH refused')
    const times: number[] = []
    for (const revoke of revocations(s)) times.push(await roleGrantToDeny(s, revoke))
    record('role grant, PUBLISH refused (2 verifiers)', times)
  })
})

/** v2's keys.verifyKey on `base` with `rootKey`: the status says whether the verifier accepted the root key. */
async function verifyV2(base: string, rootKey: string, key: string) {
  const response = await fetch(`${base}/v2/keys.verifyKey`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${rootKey}` },
    body: JSON.stringify({ key }),
  })
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

/**
 * A verify-only root key that every verifier has cached as valid; `revoke` (revoke or roll through the API) must
 * answer 200, then every verifier must refuse the root key (401) within the bound of that answer.
 */
async function rootKeyRevokeToRefuse(s: Stack, revoke: (rootKeyId: string) => Promise<{ status: number }>) {
  const rootKey = (await post(s.controlPlane.url, 'rootKeys.createRootKey', { permissions: ['api.*.verify_key'] }))
    .body as { rootKeyId: string; key: string }
  const api = await post(s.controlPlane.url, 'apis.createApi', { name: 'bound' })
  const { key } = (await post(s.controlPlane.url, 'keys.createKey', { apiId: api.body.apiId })).body as { key: string }
  const verifiers = [s.verifier, ...s.others]
  // Within the bound of the create: published, not yet necessarily heard of by every verifier.
  for (const v of verifiers) {
    await waitFor(
      async () => (await verifyV2(v.url, rootKey.key, key)).status === 200,
      'the root key',
      MAX_STALENESS_MS,
      5,
    )
    expect((await verifyV2(v.url, rootKey.key, key)).body.data).toMatchObject({ valid: true, code: 'VALID' })
  }
  expect((await revoke(rootKey.rootKeyId)).status).toBe(200)
  const answeredAt = performance.now()
  const refused = await Promise.all(
    verifiers.map(async (v) => {
      const refusal = await pollUntil(
        async () => {
          const answer = await verifyV2(v.url, rootKey.key, key)
          const elapsed = performance.now() - answeredAt
          if (answer.status === 401) return { elapsed }
          expect(answer.status, `root key accepted ${elapsed.toFixed(0)} ms after the revoke answered`).toBe(200)
          expect(elapsed).toBeLessThanOrEqual(MAX_STALENESS_MS)
          return undefined
        },
        'the verifier to refuse the root key',
        POLL_TIMEOUT_MS,
        5,
      )
      return refusal.elapsed
    }),
  )
  return Math.max(...refused)
}

describe('revocation bound for root keys on the verifier (v2 keys.verifyKey; two verifiers, real Redis)', () => {
  const revocations = (s: Stack) => [
    (rootKeyId: string) => post(s.controlPlane.url, 'rootKeys.revokeRootKey', { rootKeyId }),
    (rootKeyId: string) => post(s.controlPlane.url, 'rootKeys.rollRootKey', { rootKeyId }),
  ]

  it('healthy: a revoked or rolled root key is refused by both verifiers at once', async () => {
    const s = await sharedStack('healthy')
    const times: number[] = []
    for (const revoke of revocations(s)) for (let i = 0; i < 2; i++) times.push(await rootKeyRevokeToRefuse(s, revoke))
    record('root key revoked, healthy (2 verifiers)', times)
    expect(Math.max(...times)).toBeLessThan(PUBSUB_MS)
  })

  it('PUBLISH refused: both verifiers learn it from the shard logs within the bound', async () => {
    const s = await sharedStack('PUBLISH refused')
    const times: number[] = []
    for (const revoke of revocations(s)) for (let i = 0; i < 2; i++) times.push(await rootKeyRevokeToRefuse(s, revoke))
    record('root key revoked, PUBLISH refused (2 v.)', times)
  })

  it('the bootstrap root key turned off: both verifiers refuse KEYGATE_ROOT_KEY within the bound', async () => {
    const s = await stack({ verifiers: 2, verifierRootKey: true })
    await s.redis.admin.call('ACL', 'SETUSER', 'default', '-publish')
    expect((await post(s.controlPlane.url, 'rootKeys.createRootKey', { permissions: ['*'] })).status).toBe(200)
    const api = await post(s.controlPlane.url, 'apis.createApi', { name: 'bound' })
    const { key } = (await post(s.controlPlane.url, 'keys.createKey', { apiId: api.body.apiId })).body as {
      key: string
    }
    const verifiers = [s.verifier, ...s.others]
    for (const v of verifiers) expect((await verifyV2(v.url, ROOT_KEY, key)).status).toBe(200)
    const disabled = await runKeygate(['root-key', 'bootstrap', 'disable'], { REDIS_URL: s.redis.url })
    expect(disabled.code, disabled.stderr).toBe(0)
    const answeredAt = performance.now()
    const refused = await Promise.all(
      verifiers.map(async (v) => {
        const refusal = await pollUntil(
          async () => {
            const answer = await verifyV2(v.url, ROOT_KEY, key)
            const elapsed = performance.now() - answeredAt
            if (answer.status === 401) return { elapsed }
            expect(answer.status).toBe(200)
            expect(elapsed).toBeLessThanOrEqual(MAX_STALENESS_MS)
            return undefined
          },
          'the verifier to refuse the bootstrap root key',
          POLL_TIMEOUT_MS,
          5,
        )
        return refusal.elapsed
      }),
    )
    record('bootstrap key off (CLI), PUBLISH refused', refused)
  })
})

describe('revocation bound under failure (real Redis, real processes)', () => {
  it('healthy: a connected verifier denies within milliseconds', async () => {
    const s = await sharedStack('healthy')
    const times: number[] = []
    for (let i = 0; i < 5; i++) times.push(await disableToDeny(s, await cachedKey(s)))
    record('healthy (pub/sub)', times)
    expect(Math.max(...times)).toBeLessThan(PUBSUB_MS)
  })

  it('subscriber connection killed just before the disable', async () => {
    const s = await stack()
    const times: number[] = []
    for (let i = 0; i < 3; i++) {
      const key = await cachedKey(s)
      times.push(
        await disableToDeny(s, key, async () => {
          await s.redis.admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub')
          expect((await post(s.controlPlane.url, 'keys.updateKey', { keyId: key.keyId, enabled: false })).status).toBe(
            200,
          )
        }),
      )
    }
    record('subscriber killed before disable', times)
  })

  it('subscriber unable to reconnect while the disable happens', async () => {
    const s = await stack({ verifierUser: 'sidecar' })
    const key = await cachedKey(s)
    // Redis now refuses the verifier's SUBSCRIBE (no channel rights) while its other commands still work.
    await s.redis.admin.call('ACL', 'SETUSER', 'sidecar', 'resetchannels')
    await s.redis.admin.call('CLIENT', 'KILL', 'USER', 'sidecar')
    const times = [await disableToDeny(s, key)]
    record('subscriber cannot resubscribe', times)
    expect(await (await fetch(`${s.verifier.url}/metrics`)).text()).toMatch(
      /keygate_change_feed_connected\{service="verifier"\} 0/,
    )
  })

  it('PUBLISH refused for all clients', async () => {
    const s = await sharedStack('PUBLISH refused')
    const times: number[] = []
    for (let i = 0; i < 3; i++) times.push(await disableToDeny(s, await cachedKey(s)))
    record('PUBLISH refused', times)
  })

  it('Redis restarted (AOF): fails closed while it is down, denies once it is back', async () => {
    const s = await stack({ redisArgs: ['--appendonly', 'yes', '--appendfsync', 'always'] })
    const key = await cachedKey(s)
    const { port, dir } = s.redis
    await s.redis.stop({ keepDir: true })
    const stoppedAt = performance.now()
    // Past the bound with Redis down, the verifier may not answer from its cache: 503, never valid:true. It has closed
    // by then (and stays closed while Redis is down): wait for that, not for the clock.
    await waitFor(
      async () => (await post(s.verifier.url, 'keys.verifyKey', { key: key.key }, false)).status === 503,
      'the verifier to fail closed',
      MAX_STALENESS_MS + 100,
      5,
    )
    expect(performance.now() - stoppedAt).toBeLessThanOrEqual(MAX_STALENESS_MS + 100)
    const closed = await post(s.verifier.url, 'keys.verifyKey', { key: key.key }, false)
    expect(closed.status).toBe(503)
    expect(closed.body.error.code).toBe('UNAVAILABLE')
    expect((await fetch(`${s.verifier.url}/readyz`)).status).toBe(503)

    const restarted = await startRedisServer({ port, dir, args: ['--appendonly', 'yes', '--appendfsync', 'always'] })
    running.push({ stop: () => restarted.stop() })
    s.redis = restarted
    // Disable at the first moment the control plane can write again: the verifier may not have resubscribed
    // yet, so the event can be lost and only its reconnect poll repairs it.
    const times = [
      await disableToDeny(s, key, async () => {
        await waitFor(
          async () =>
            (await post(s.controlPlane.url, 'keys.updateKey', { keyId: key.keyId, enabled: false })).status === 200,
          'the control plane to write again',
          5_000,
          5,
        )
      }),
    ]
    record('Redis restarted (AOF), disable at once', times)
  })

  it('Redis restarted empty (no persistence): the epoch change drops what the verifier held', async () => {
    const s = await stack()
    const key = await cachedKey(s)
    const { port } = s.redis
    await s.redis.stop()
    const restarted = await startRedisServer({ port })
    running.push({ stop: () => restarted.stop() })
    // The key is gone with the data: within the bound the verifier must stop saying it is valid.
    const lostAt = performance.now()
    await pollUntil(
      async () => {
        const verdict = await post(s.verifier.url, 'keys.verifyKey', { key: key.key }, false)
        const elapsed = performance.now() - lostAt
        if (verdict.body.valid === false) {
          expect(verdict.body.code).toBe('NOT_FOUND')
          record('Redis restarted empty (key lost)', [elapsed])
          return true
        }
        expect(elapsed).toBeLessThanOrEqual(MAX_STALENESS_MS)
        return false
      },
      'the verifier to stop saying the lost key is valid',
      POLL_TIMEOUT_MS,
      5,
    )
  })

  it('control plane killed right after answering', async () => {
    const s = await stack()
    const key = await cachedKey(s)
    const times = [
      await disableToDeny(s, key, async () => {
        expect((await post(s.controlPlane.url, 'keys.updateKey', { keyId: key.keyId, enabled: false })).status).toBe(
          200,
        )
        s.controlPlane.child.kill('SIGKILL')
      }),
    ]
    record('control plane SIGKILLed after 200', times)
  })

  it('events delivered twice and out of order change nothing', async () => {
    const s = await stack()
    const key = await cachedKey(s)
    // Capture the real events as Redis publishes them.
    const { Redis } = await import('ioredis')
    const spy = new Redis(s.redis.url)
    const events: string[] = []
    await spy.subscribe('kg:changes')
    spy.on('message', (_channel: string, message: string) => events.push(message))
    const times = [await disableToDeny(s, key)]
    const disabledEvent = events.find((e) => e.includes(key.keyId) && e.includes('"updated"'))!
    expect(disabledEvent).toBeDefined()
    const createdEvent = JSON.stringify({
      ...JSON.parse(disabledEvent),
      kind: 'created',
      rev: JSON.parse(disabledEvent).rev - 1,
    })
    // Twice, then an older event after it, then a far-future revision (a gap nothing in the log fills).
    for (const message of [
      disabledEvent,
      disabledEvent,
      createdEvent,
      JSON.stringify({ ...JSON.parse(disabledEvent), rev: 10_000_000 }),
    ]) {
      await s.redis.admin.publish('kg:changes', message)
    }
    // Three polls' worth in which nothing changes the verdict, asked throughout.
    const until = performance.now() + 3 * POLL_INTERVAL_MS
    while (performance.now() < until) {
      const verdict = await post(s.verifier.url, 'keys.verifyKey', { key: key.key }, false)
      expect(verdict.body).toMatchObject({ valid: false, code: 'DISABLED' })
      await nothingHappensFor(20)
    }
    // And the verifier still follows real changes afterwards, in both directions, within the bound.
    expect((await post(s.controlPlane.url, 'keys.updateKey', { keyId: key.keyId, enabled: true })).status).toBe(200)
    const reenabledAt = performance.now()
    await pollUntil(
      async () => {
        if ((await post(s.verifier.url, 'keys.verifyKey', { key: key.key }, false)).body.valid === true) return true
        expect(performance.now() - reenabledAt).toBeLessThanOrEqual(MAX_STALENESS_MS)
        return false
      },
      'the verifier to accept the key again',
      POLL_TIMEOUT_MS,
      5,
    )
    times.push(await disableToDeny(s, key))
    spy.disconnect()
    record('duplicate / out-of-order / bogus events', times)
  })
})
