import { describe, expect, it } from 'vitest'
import { jsonPoster, startKeygate } from '../support/processes.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { startSentinel, type SentinelProcess } from '../support/sentinel.js'
import { stopAfterAll } from '../support/stop-after-all.js'
import { waitFor } from '../support/wait-for.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'

const ROOT_KEY = 'sentinel-test-root-key-0123456789'
const NAME = 'kg'

describe('Redis Sentinel: 1 master, 1 replica, 3 sentinels, forced failover', () => {
  const stoppable = stopAfterAll()

  it('runs the seed flow, keeps every acknowledged write across the failover, and a disable still reaches the verifier', async () => {
    // No delay before a full sync (Redis 7 waits 5 s by default), so replicas attach at once, also after the failover.
    const fast = ['--repl-diskless-sync-delay', '0']
    const master: RedisServer = await startRedisServer({ args: fast })
    const replica: RedisServer = await startRedisServer({
      args: [...fast, '--replicaof', '127.0.0.1', String(master.port)],
    })
    stoppable.push(master, replica)
    // Redis 7 delays a replica's first full sync (repl-diskless-sync-delay, 5 s): wait until it is attached.
    await waitFor(
      async () => (await replica.admin.info('replication')).includes('master_link_status:up'),
      'the replica to attach',
      20_000,
      100,
    )
    const stopped = stoppable.stopped
    const sentinels: SentinelProcess[] = await Promise.all(
      Array.from({ length: 3 }, () => stopped(startSentinel(NAME, master.port))),
    )

    const env = {
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_SENTINELS: sentinels.map((s) => `127.0.0.1:${s.port}`).join(','),
      REDIS_SENTINEL_NAME: NAME,
      KEYGATE_ROOT_KEY: ROOT_KEY,
      LOG_LEVEL: 'warn',
      MAX_STALENESS_MS: '2000',
      POLL_INTERVAL_MS: '250',
      // Acknowledge a write only once the replica has it: a write the old master takes in the failover window
      // then answers 503 instead of being acknowledged and lost.
      REDIS_WAIT_REPLICAS: '1',
      REDIS_WAIT_TIMEOUT_MS: '500',
      // The webhook receiver below is on loopback.
      WEBHOOK_ALLOW_PRIVATE: 'true',
      // A delivery claimed as the connections were killed comes back after its claim's lease (this + 5 s): short here,
      // so that the wait below covers it.
      WEBHOOK_TIMEOUT_MS: '2000',
    }
    // Keygate starts while the sentinels find each other (their hellos go every 2 s): it only asks them for the master.
    const [controlPlane, verifier] = await Promise.all([
      stopped(startKeygate(['control-plane'], env)),
      stopped(startKeygate(['verifier'], env)),
      // The sentinels know the replica and each other (needed to elect a leader for the failover).
      waitFor(
        async () => {
          const known = await Promise.all(
            sentinels.map(async (s) => [
              ((await s.client.call('SENTINEL', 'replicas', NAME)) as unknown[]).length,
              ((await s.client.call('SENTINEL', 'sentinels', NAME)) as unknown[]).length,
            ]),
          )
          return known.every(([replicas, others]) => replicas === 1 && others === 2)
        },
        'the sentinels to discover the replica and each other',
        20_000,
        100,
      ),
    ])
    const post = jsonPoster(ROOT_KEY)
    // Webhooks through the failover: every acknowledged create is announced, the queue on the new master too.
    const receiver = await startWebhookReceiver()
    stoppable.push(receiver)
    const endpoint = await post(controlPlane.url, 'webhooks.createEndpoint', { url: receiver.url })
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200)
    receiver.useSecret(endpoint.body.secret)

    const { body: api } = await post(controlPlane.url, 'apis.createApi', { name: 'sentinel' })
    const acknowledged: { keyId: string; key: string }[] = []
    for (let i = 0; i < 20; i++) {
      const made = await post(controlPlane.url, 'keys.createKey', { apiId: api.apiId })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      acknowledged.push(made.body as { keyId: string; key: string })
    }
    expect((await post(verifier.url, 'keys.verifyKey', { key: acknowledged[0]!.key }, false)).body.valid).toBe(true)
    // Replication is asynchronous: let the replica catch up before forcing the failover.
    await waitFor(
      async () => (await master.admin.call('WAIT', '1', '1000')) === 1,
      'the replica to acknowledge the writes',
      5_000,
    )

    await sentinels[0]!.client.call('SENTINEL', 'FAILOVER', NAME)
    const failedOverAt = Date.now()
    await waitFor(
      async () => {
        const [, port] = (await sentinels[0]!.client.call('SENTINEL', 'get-master-addr-by-name', NAME)) as [
          string,
          string,
        ]
        return Number(port) === replica.port
      },
      'the sentinels to promote the replica',
      20_000,
      100,
    )
    // The sentinels make the old master a replica of the new one only when their next look at it comes round (every
    // 10 s), and until then no replica acknowledges a write (REDIS_WAIT_REPLICAS). Done now, as they would do it:
    // what is under test is how Keygate follows the failover, not how soon Sentinel tidies up after it.
    await master.admin.call('REPLICAOF', '127.0.0.1', String(replica.port))
    // The control plane writes again once it follows the new master.
    const after = await waitFor(
      async () => {
        const created = await post(controlPlane.url, 'keys.createKey', { apiId: api.apiId })
        return created.status === 200 ? (created.body as { keyId: string; key: string }) : undefined
      },
      'a write on the new master',
      40_000,
      100,
    )
    acknowledged.push(after)
    console.log(`sentinel failover: writes resumed ${Date.now() - failedOverAt} ms after SENTINEL FAILOVER`)

    // Just after a failover the client may reconnect once more (the sentinels' announcement can arrive after the
    // first write): a 503 then means "retry", so reads retry; what must never happen is a 404.
    const read = async (keyId: string) => {
      const status = await waitFor(
        async () => {
          const response = await fetch(`${controlPlane.url}/v1/keys.getKey?keyId=${keyId}`, {
            headers: { authorization: `Bearer ${ROOT_KEY}` },
          })
          return response.status === 503 ? undefined : response.status
        },
        `a stable answer for ${keyId}`,
        5_000,
        50,
      )
      return status
    }
    for (const { keyId } of acknowledged) expect(await read(keyId), keyId).toBe(200)
    // A disable on the new master reaches the verifier within the bound.
    const target = acknowledged[1]!
    const disabled = await waitFor(
      async () => {
        const answer = await post(controlPlane.url, 'keys.updateKey', { keyId: target.keyId, enabled: false })
        return answer.status === 503 ? undefined : answer.status
      },
      'the disable to be written',
      5_000,
      50,
    )
    expect(disabled).toBe(200)
    const disabledAt = Date.now()
    await waitFor(
      async () => (await post(verifier.url, 'keys.verifyKey', { key: target.key }, false)).body.code === 'DISABLED',
      'the disable to reach the verifier',
      2_000,
      5,
    )
    console.log(`sentinel failover: disable→deny ${Date.now() - disabledAt} ms on the new master`)
    expect((await post(verifier.url, 'keys.verifyKey', { key: after.key }, false)).body.valid).toBe(true)
    const unannounced = () =>
      acknowledged.filter(
        ({ keyId }) => !receiver.events.some((event) => event.type === 'key.created' && event.data.keyId === keyId),
      )
    // At least once, not at once: a delivery claimed as Sentinel killed the old master's connections is sent again
    // after its lease (7 s here).
    await waitFor(
      () => unannounced().length === 0,
      'a key.created webhook for every acknowledged create',
      20_000,
      50,
    ).catch((err: Error) => {
      throw new Error(
        `${err.message}; unannounced: ${unannounced()
          .map(({ keyId }) => keyId)
          .join(', ')}`,
      )
    })
    expect(receiver.events.every((event) => event.verified)).toBe(true)
  }, 90_000)
})
