import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import { openRedis } from '../../shared/store/redis/redis-connection.js'
import { replicaWait } from '../../shared/store/redis/redis-replica-wait.js'
import { createRedisStore } from '../../shared/store/redis-store.js'
import type { Store } from '../../shared/store/store.js'
import { freePort } from '../support/free-port.js'
import { startRedisServer, useRedisServer } from '../support/redis-server.js'
import { nothingHappensFor } from '../support/nothing-happens.js'
import { waitFor } from '../support/wait-for.js'
import { newApi, newKey } from './contract-records.js'

/**
 * WAIT on the control plane's one connection to Redis. Redis holds a connection for as long as its WAIT lasts (up to
 * REDIS_WAIT_TIMEOUT_MS when no replica confirms), with every command sent after it: those are not late, and the
 * connection is not stranded.
 */
describe('waiting for replicas (WAIT) on a connection shared by every request', () => {
  const redis = useRedisServer()
  /** For the apis the keys go in: acknowledged without waiting. */
  let plain: Store
  const opened: Store[] = []
  beforeAll(async () => {
    plain = createRedisStore(await openRedis(redis.url, 'plain'))
  })
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()))
  })
  afterAll(async () => {
    await plain?.close()
  })

  /** A store that waits for one replica, on a connection of its own; `stranded` counts its replacements. */
  async function waitingStore(url: string, timeoutMs: number) {
    const connection = await openRedis(url, 'waiting')
    const counts = { stranded: 0 }
    connection.on('stranded', () => counts.stranded++)
    const store = createRedisStore(connection, { replication: { waitReplicas: 1, timeoutMs } })
    opened.push(store)
    return { store, counts }
  }

  async function outcome(write: Promise<unknown>): Promise<string> {
    return write.then(
      () => 'acknowledged',
      (err: unknown) => {
        expect(err).toBeInstanceOf(StoreUnavailableError)
        return (err as Error).message
      },
    )
  }

  it('sends one WAIT at a time: writes answered meanwhile share the next, and other commands are not held past theirs', async () => {
    // No replica: each WAIT lasts its whole second. Queued one behind the other, five of them held the connection for
    // five seconds, and what was sent with them timed out (and the connection was dropped as stranded).
    const { store, counts } = await waitingStore(redis.url, 1_000)
    const apiId = (await newApi(plain)).id
    const started = performance.now()
    const writes = Array.from({ length: 5 }, () => outcome(store.keys.createKey(newKey(apiId))))
    await waitFor(
      async () => String(await redis.admin.call('CLIENT', 'LIST')).includes('cmd=wait'),
      'the first WAIT at Redis',
    )
    const read = store.keys.apiExists(apiId)
    expect(await read).toBe(true)
    for (const answer of await Promise.all(writes)) expect(answer).toMatch(/reached 0 of 1 replicas in 1000 ms/)
    // Two WAITs (the first write's, then the one the other four share), not five.
    expect(performance.now() - started).toBeLessThan(4_000)
    expect(counts.stranded).toBe(0)
  })

  it('waits out a WAIT longer than the command timeout (2 s), and what was sent behind it', async () => {
    const { store, counts } = await waitingStore(redis.url, 2_500)
    const apiId = (await newApi(plain)).id
    const started = performance.now()
    const write = outcome(store.keys.createKey(newKey(apiId)))
    // A second into the WAIT, the write still unanswered (it is answered at 2.5 s, as asserted below).
    await nothingHappensFor(1_000)
    // Sent a second into the WAIT: answered once it ends, 1.5 s later.
    expect(await store.keys.apiExists(apiId)).toBe(true)
    expect(await write).toMatch(/reached 0 of 1 replicas in 2500 ms/)
    expect(performance.now() - started).toBeGreaterThanOrEqual(2_500)
    expect(counts.stranded).toBe(0)
  })

  it('answers 503 when the server became a replica after the write: Redis refuses WAIT there', async () => {
    // Demoted by REPLICAOF, as a Cluster's manual failover (CLUSTER FAILOVER) demotes a master: only its blocked
    // clients are told, the others stay connected and learn it from their next command.
    const demoted = await startRedisServer()
    const connection = await openRedis(demoted.url, 'demoted')
    try {
      const afterWrite = replicaWait(connection, { waitReplicas: 1, timeoutMs: 100 })
      await connection.set('written', 'before the demotion')
      await demoted.admin.call('REPLICAOF', '127.0.0.1', String(await freePort()))
      expect(connection.status).toBe('ready')
      const refused = await afterWrite().catch((err: unknown) => err)
      expect(refused).toBeInstanceOf(StoreUnavailableError)
    } finally {
      connection.disconnect()
      await demoted.stop()
    }
  })
})
