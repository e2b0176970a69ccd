import { describe, expect, it } from 'vitest'
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

    // Verifications reach the analytics engine from both verifiers (their rows handed to the store's buffers, spread
    // over the Cluster's slots, every 2 s; ingested by the control plane): each of the 24 keys was valid once on each,
    // and some perhaps again while its disable was on its way. Exactly that many: no row lost, none counted twice.
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
      "both verifiers' counts of every key to reach the analytics engine",
      30_000,
      250,
    )
  }, 80_000)
})
