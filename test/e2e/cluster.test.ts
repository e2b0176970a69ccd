import { describe, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import { bucketStart } from '../../shared/analytics.js'
import { connectRedis } from '../../shared/store/redis/redis-connection.js'
import { createRedisStore } from '../../shared/store/redis-store.js'
import { jsonPoster, startKeygate, type KeygateProcess } from '../support/processes.js'
import { stopAfterAll } from '../support/stop-after-all.js'
import { nothingHappensFor } from '../support/nothing-happens.js'
import { waitFor } from '../support/wait-for.js'
import { startRedisCluster } from '../support/redis-cluster.js'
import { clearOfWindowEdge } from '../support/window-edge.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'

const ROOT_KEY = 'cluster-test-root-key-0123456789'

describe('Redis Cluster: 3 masters', () => {
  const stoppable = stopAfterAll()

  it('runs the seed flow with keys in many slots: verify, disable reaches the verifier, listKeys, credits, exact limits', async () => {
    const stopped = stoppable.stopped
    const nodes = await startRedisCluster(stopped)

    const env = {
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_CLUSTER_NODES: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
      KEYGATE_ROOT_KEY: ROOT_KEY,
      LOG_LEVEL: 'warn',
      MAX_STALENESS_MS: '2000',
      POLL_INTERVAL_MS: '250',
      // The webhook receiver below is on loopback.
      WEBHOOK_ALLOW_PRIVATE: 'true',
    }
    // Side by side: each needs only the cluster.
    const [controlPlane, verifier] = await Promise.all([
      stopped(startKeygate(['control-plane'], env)),
      stopped(startKeygate(['verifier'], env)),
    ])
    const post = jsonPoster(ROOT_KEY)
    // Webhooks on a Cluster: the queue and its scripts in one slot, the events derived from logs on every node.
    const receiver = await startWebhookReceiver()
    stoppable.push(receiver)
    const endpoint = await post(controlPlane.url, 'webhooks.createEndpoint', { url: receiver.url })
    expect(endpoint.status).toBe(200)
    receiver.useSecret(endpoint.body.secret)

    const { body: api } = await post(controlPlane.url, 'apis.createApi', { name: 'cluster' })
    const keys: { keyId: string; key: string }[] = []
    for (let i = 0; i < 24; i++) {
      const made = await post(controlPlane.url, 'keys.createKey', {
        apiId: api.apiId,
        externalId: i % 2 ? 'odd' : 'even',
      })
      expect(made.status).toBe(200)
      keys.push(made.body as { keyId: string; key: string })
    }
    for (const { key, keyId } of keys)
      expect((await post(verifier.url, 'keys.verifyKey', { key }, false)).body).toMatchObject({ valid: true, keyId })

    // A verifier started after the keys were made knows them from its filter of known hashes, built by a SCAN of
    // every master: a key the scan missed would be NOT_FOUND (its filter negative confirmed by a poll).
    const late: KeygateProcess = await startKeygate(['verifier'], env)
    stoppable.push(late)
    const filterMetric = async (name: string) => {
      const line = (await (await fetch(`${late.url}/metrics`)).text()).split('\n').find((l) => l.startsWith(name))
      return Number(line?.split(' ').pop())
    }
    await waitFor(
      async () =>
        (await filterMetric('keygate_verify_filter_builds_total')) >= 1 &&
        (await filterMetric('keygate_verify_filter_unsure_shards')) === 0,
      'the late verifier to build its filter',
    )
    for (const { key, keyId } of keys)
      expect((await post(late.url, 'keys.verifyKey', { key }, false)).body).toMatchObject({ valid: true, keyId })
    expect((await post(late.url, 'keys.verifyKey', { key: 'sk_no_such_key' }, false)).body.code).toBe('NOT_FOUND')
    expect(await filterMetric('keygate_verify_filter_negatives_total')).toBe(1)

    // Disables on many shards (so on every node) reach the verifier.
    for (const { keyId } of keys.slice(0, 12))
      expect((await post(controlPlane.url, 'keys.updateKey', { keyId, enabled: false })).status).toBe(200)
    // A poll that came before its disable did is a valid verification, counted like any other: the count check at
    // the end expects it (on a loaded machine a disable can take longer than the previous keys' polls).
    const validWhileDisabling = new Map<string, number>()
    for (const { key, keyId } of keys.slice(0, 12)) {
      await waitFor(
        async () => {
          const { code } = (await post(verifier.url, 'keys.verifyKey', { key }, false)).body
          if (code === 'VALID') validWhileDisabling.set(keyId, (validWhileDisabling.get(keyId) ?? 0) + 1)
          return code === 'DISABLED'
        },
        'a disable to reach the verifier',
        2_000,
        5,
      )
    }

    const listed = await fetch(`${controlPlane.url}/v1/apis.listKeys?apiId=${api.apiId}&limit=10&externalId=odd`, {
      headers: { authorization: `Bearer ${ROOT_KEY}` },
    })
    // total counts the whole api (as Unkey's); the page holds only the owner's keys.
    const page = (await listed.json()) as { total: number; keys: { ownerId: string }[] }
    expect(page.total).toBe(24)
    expect(page.keys.map((k) => k.ownerId)).toEqual(Array(10).fill('odd'))

    // Roles and permissions are records in their own shards (other slots than the key's): a role's grant reaches
    // the verifier, and so does taking it away.
    const permission = await post(controlPlane.url, 'permissions.createPermission', { name: 'cluster.read' })
    const role = await post(controlPlane.url, 'permissions.createRole', {
      name: 'cluster-reader',
      permissions: [{ id: permission.body.permissionId }],
    })
    const { body: reader } = await post(controlPlane.url, 'keys.createKey', {
      apiId: api.apiId,
      roles: ['cluster-reader'],
    })
    const query = { key: reader.key, authorization: { permissions: 'cluster.read' } }
    expect((await post(verifier.url, 'keys.verifyKey', query, false)).body).toMatchObject({ valid: true })
    await post(controlPlane.url, 'permissions.setRolePermissions', { roleId: role.body.roleId, permissions: [] })
    await waitFor(
      async () => (await post(verifier.url, 'keys.verifyKey', query, false)).body.code === 'INSUFFICIENT_PERMISSIONS',
      'the role change to reach the verifier',
      2_000,
      5,
    )

    const credited = (
      await post(controlPlane.url, 'keys.createKey', {
        apiId: api.apiId,
        remaining: 2,
        ratelimit: { limit: 1, duration: 60_000, async: false },
      })
    ).body
    await clearOfWindowEdge(60_000)
    expect((await post(verifier.url, 'keys.verifyKey', { key: credited.key }, false)).body).toMatchObject({
      valid: true,
      remaining: 1,
    })
    expect((await post(verifier.url, 'keys.verifyKey', { key: credited.key }, false)).body).toMatchObject({
      code: 'RATE_LIMITED',
    })

    // One call's exact limits of two owners (the identity's, the key's own, one the request defines): every counter
    // in the identity's slot, so that the one script reaches them all (CROSSSLOT otherwise).
    const identityLimit = { externalId: 'odd', ratelimits: [{ name: 'shared', limit: 2, duration: 60_000 }] }
    expect((await post(controlPlane.url, 'identities.updateIdentity', identityLimit)).status).toBe(200)
    const member = (
      await post(controlPlane.url, 'keys.createKey', {
        apiId: api.apiId,
        externalId: 'odd',
        ratelimit: { limit: 5, duration: 60_000, async: false },
        ratelimits: [{ name: 'own', limit: 5, duration: 60_000 }],
      })
    ).body
    const named = {
      key: member.key,
      ratelimits: [{ name: 'shared' }, { name: 'own' }, { name: 'adhoc', limit: 5, duration: 60_000, async: false }],
    }
    // Until the identity's new limit reaches the verifier, naming it is a 400 (and charges nothing). The call that
    // gets through and the two after it must fall in one window: the wait is at most 2 s of the 3 s kept clear.
    await clearOfWindowEdge(60_000)
    await waitFor(
      async () => (await post(verifier.url, 'keys.verifyKey', named, false)).body.valid === true,
      'the identity’s limit to reach the verifier',
      2_000,
      5,
    )
    expect((await post(verifier.url, 'keys.verifyKey', named, false)).body).toMatchObject({ valid: true })
    expect((await post(verifier.url, 'keys.verifyKey', named, false)).body).toMatchObject({
      code: 'RATE_LIMITED',
      ratelimits: [
        { name: 'default', remaining: 3 },
        { name: 'shared', exceeded: true },
        { name: 'own', remaining: 3 },
        { name: 'adhoc' },
      ],
    })
    // Exact limits of keys in many slots, verified at once: their scripts, sent in one turn of the event loop, each
    // go to their own slot's node (auto-pipelined together, they were all refused: 503).
    const limited = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const ratelimit = { limit: 3, duration: 60_000, async: false }
        return (await post(controlPlane.url, 'keys.createKey', { apiId: api.apiId, ratelimit })).body.key as string
      }),
    )
    await clearOfWindowEdge(60_000)
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(limited.map((key) => post(verifier.url, 'keys.verifyKey', { key }, false)))
      expect(answers.map((answer) => [answer.status, answer.body.code])).toEqual(Array(8).fill([200, 'VALID']))
    }
    expect((await fetch(`${verifier.url}/readyz`)).status).toBe(200)
    // Every key's creation and every disable reached the receiver, signed, each once.
    const webhookEvents = (type: string) =>
      new Set(receiver.events.filter((e) => e.type === type).map((e) => e.data.keyId))
    await waitFor(
      () =>
        keys.every(({ keyId }) => webhookEvents('key.created').has(keyId)) &&
        keys.slice(0, 12).every(({ keyId }) => webhookEvents('key.updated').has(keyId)),
      'the webhook events of every key',
      10_000,
      50,
    )
    expect(receiver.events.every((event) => event.verified)).toBe(true)
    expect(new Set(receiver.events.map((event) => event.id)).size).toBe(receiver.events.length)
    // The instance id covers every master and is stable: over a second of polls (every 250 ms), nothing is
    // dropped and no poll fails (some may have at start-up, while the client learned the slots).
    const counters = async () => {
      const metrics = await (await fetch(`${verifier.url}/metrics`)).text()
      const value = (name: string) => Number(new RegExp(`${name}\\{service="verifier"\\} (\\d+)`).exec(metrics)?.[1])
      return { drops: value('keygate_cache_drops_total'), errors: value('keygate_revision_poll_errors_total') }
    }
    const before = await counters()
    await nothingHappensFor(1_000)
    expect(await counters()).toEqual(before)

    // Verification counts reach the store from both verifiers (their flushes, every 5 s, are a call per key: a key's
    // buckets are in its id's slot, and keys are in many): each of the 24 keys was valid once on each, and some
    // perhaps again while its disable was on its way. Exactly that many: no count lost, none counted twice.
    const successes = async (keyId: string) => {
      const answer = await fetch(`${controlPlane.url}/v1/keys.getVerifications?keyId=${keyId}`, {
        headers: { authorization: `Bearer ${ROOT_KEY}` },
      })
      const { verifications } = (await answer.json()) as { verifications: { success: number }[] }
      return verifications.reduce((sum, bucket) => sum + bucket.success, 0)
    }
    await waitFor(
      async () =>
        (await Promise.all(keys.map(({ keyId }) => successes(keyId)))).every(
          (n, i) => n === 2 + (validWhileDisabling.get(keys[i]!.keyId) ?? 0),
        ),
      "both verifiers' counts of every key to reach the store",
      15_000,
      250,
    )

    // A flush larger than one turn's share (200 buckets): sent over several turns, a call per key in its slot, a key
    // met again after a pause in a call of its own. Every count lands once.
    const store = createRedisStore(
      await connectRedis('redis://127.0.0.1:6379', 'cluster-usage', {
        cluster: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
      }),
    )
    try {
      const hour = 430_000 * 3_600_000
      const day = bucketStart('day', hour)
      const flush = Array.from({ length: 300 }, (_, i) => [
        { keyId: `key_c${i}`, granularity: 'hour' as const, time: hour, counts: { success: 1 } },
        { keyId: `key_c${i}`, granularity: 'day' as const, time: day, counts: { success: 1 } },
      ]).flat()
      // key_c0 and key_c299 again, after the third pause (every 200 buckets): each in a call of its own.
      flush.push(
        { keyId: 'key_c0', granularity: 'hour', time: hour, counts: { success: 2 } },
        { keyId: 'key_c299', granularity: 'hour', time: hour, counts: { success: 4 } },
      )
      await store.usage.addUsage(flush)
      const hourOf = async (keyId: string) => (await store.usage.readUsage(keyId, 'hour', hour, hour))[0]?.success
      expect(await hourOf('key_c0')).toBe(3)
      expect(await hourOf('key_c299')).toBe(5)
      for (const i of [1, 99, 100, 101, 199, 200, 250]) expect(await hourOf(`key_c${i}`), `key_c${i}`).toBe(1)
      expect((await store.usage.readUsage('key_c150', 'day', day, day))[0]?.success).toBe(1)

      // A flush ending on a turn's boundary (1,000 buckets): a few calls in flight at once, never more than the window,
      // and none still in flight once it resolves (a shutdown closes the connection right after).
      const client = (store.usage as unknown as { redis: { addUsage: (...args: unknown[]) => Promise<number> } }).redis
      const addUsage = client.addUsage
      let inFlight = 0
      let mostInFlight = 0
      client.addUsage = function (this: unknown, ...args: unknown[]) {
        mostInFlight = Math.max(mostInFlight, ++inFlight)
        return addUsage.apply(this, args).finally(() => inFlight--)
      }
      try {
        const even = Array.from({ length: 500 }, (_, i) => [
          { keyId: `key_e${i}`, granularity: 'hour' as const, time: hour, counts: { success: 1 } },
          { keyId: `key_e${i}`, granularity: 'day' as const, time: day, counts: { success: 1 } },
        ]).flat()
        await store.usage.addUsage(even)
        expect(inFlight).toBe(0)
        expect(mostInFlight).toBeGreaterThan(1)
        expect(mostInFlight).toBeLessThanOrEqual(32)
      } finally {
        client.addUsage = addUsage
      }
      for (const i of [0, 199, 200, 499]) expect(await hourOf(`key_e${i}`), `key_e${i}`).toBe(1)

      // A failed call (the 40th): increments are read only when there is room to send their call, so nothing is read
      // past the calls made but the key being read — the verifier's recorder keeps the rest for its next flush.
      let read = 0
      const failing = Array.from({ length: 500 }, (_, i) => [
        { keyId: `key_f${i}`, granularity: 'hour' as const, time: hour, counts: { success: 1 } },
        { keyId: `key_f${i}`, granularity: 'day' as const, time: day, counts: { success: 1 } },
      ]).flat()
      function* counted() {
        for (const increment of failing) {
          read++
          yield increment
        }
      }
      let callsMade = 0
      client.addUsage = function (this: unknown, ...args: unknown[]) {
        if (++callsMade === 40) throw new Error('Connection is closed.')
        return addUsage.apply(this, args)
      }
      try {
        await expect(store.usage.addUsage(counted())).rejects.toBeInstanceOf(StoreUnavailableError)
        expect(callsMade).toBe(40)
        // The 40 keys' buckets, and the next key's first (its read showed the 40th key's call complete).
        expect(read).toBe(81)
      } finally {
        client.addUsage = addUsage
      }
    } finally {
      await store.close()
    }
  }, 80_000)
})
