import bs58 from 'bs58'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashKey, generateKey } from '../../shared/key-material.js'
import { openBackend, startTestVerifier, type Backend, type TestServer } from '../support/apps.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { metric, verdict } from '../support/server-probes.js'
import { waitFor } from '../support/wait-for.js'
import { newApi, newKey } from './contract-records.js'

/**
 * A verifier alone on a Redis of its own, polling never (so nothing in the background sends a command): what a
 * verification costs Redis is then every command Redis counts, less the INFO that counts them.
 */
describe('keys with a wrong checksum', () => {
  let redis: RedisServer
  let backend: Backend
  let verifier: TestServer
  const keys = { checksummed: '', legacy: '' }

  beforeAll(async () => {
    redis = await startRedisServer()
    backend = await openBackend(redis.url)
    const api = await newApi(backend.store)
    // One key made now, and one of the format before checksums (as Unkey made them, or imported by hash).
    keys.checksummed = generateKey('sk').key
    keys.legacy = `sk_${bs58.encode(randomBytes(16))}`
    for (const key of Object.values(keys)) await backend.store.keys.createKey(newKey(api.id, { hash: hashKey(key) }))
    verifier = await startTestVerifier({ backend, sync: { pollIntervalMs: 3_600_000, maxStalenessMs: 3_600_000 } })
    await waitFor(
      async () =>
        (await metric(verifier, 'keygate_verify_filter_builds_total')) >= 1 &&
        (await metric(verifier, 'keygate_verify_filter_unsure_shards')) === 0,
      'the filter of known hashes to be built',
    )
  })
  afterAll(async () => {
    await verifier.close()
    await backend.close()
    await redis.stop()
  })

  /** Every command Redis has run so far. */
  const redisCommands = async () =>
    [...(await redis.admin.info('commandstats')).matchAll(/calls=(\d+)/g)].reduce((sum, [, n]) => sum + Number(n), 0)

  it('verifies checksummed keys and keys of the format before checksums alike', async () => {
    expect(await verdict(verifier, keys.checksummed)).toMatchObject({ valid: true })
    expect(await verdict(verifier, keys.legacy)).toMatchObject({ valid: true })
  })

  it('refuses a flood of guesses of the right shape NOT_FOUND with zero Redis commands', async () => {
    const missesBefore = await metric(verifier, 'keygate_verify_cache_misses_total')
    const before = await redisCommands()
    const FLOOD = 2_000
    const guesses = Array.from(
      { length: FLOOD },
      () => `sk_${bs58.encode(randomBytes(16))}_${bs58.encode(randomBytes(4)).slice(0, 6).padEnd(6, '1')}`,
    )
    const answers = await Promise.all(guesses.map((key) => verdict(verifier, key)))
    expect(answers.filter((answer) => answer.code !== 'NOT_FOUND')).toEqual([])
    // The INFO that read `before` is the one command since.
    expect((await redisCommands()) - before).toBe(1)
    expect(await metric(verifier, 'keygate_verify_checksum_refusals_total')).toBe(FLOOD)
    expect(await metric(verifier, 'keygate_verify_cache_misses_total')).toBe(missesBefore)
  })

  // The count above can see commands: unknown keys without a checksum cost a revision poll per batch.
  it('counts the commands unknown keys of the older format do cost', async () => {
    const before = await redisCommands()
    await Promise.all(Array.from({ length: 50 }, () => verdict(verifier, `sk_${bs58.encode(randomBytes(16))}`)))
    expect((await redisCommands()) - before).toBeGreaterThan(1)
  })
})
