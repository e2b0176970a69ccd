import { describe, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import { newId } from '../../shared/ids.js'
import { generateKey } from '../../shared/keys/key-material.js'
import { ManualClock, openBackend, startTestVerifier, type Backend } from '../support/apps.js'
import { overriding } from '../support/store-overrides.js'

const BOUND = 5_000
// Polls happen only when the test asks (pollNow), so time is entirely the injected clock's.
const sync = { maxStalenessMs: BOUND, pollIntervalMs: 3_600_000 }

/** A memory store whose revision polls, or every read, can be made to fail as an unreachable Redis would. */
function faultyStore(backend: Backend) {
  const faults = { polls: false, reads: false }
  const fail = () => {
    throw new StoreUnavailableError('unreachable (injected)')
  }
  const store = overriding(backend.store, {
    changes: { readRevisions: async () => (faults.polls ? fail() : backend.store.changes.readRevisions()) },
    keys: { getKeyByHash: async (hash: string) => (faults.reads ? fail() : backend.store.keys.getKeyByHash(hash)) },
  })
  return { store, faults }
}

async function setUp(onStale: 'read-through' | 'serve') {
  const backend = await openBackend()
  const { store, faults } = faultyStore(backend)
  const clock = new ManualClock(Date.now())
  const server = await startTestVerifier({ backend: { ...backend, store }, clock, sync: { ...sync, onStale } })
  const api = { id: newId('api'), name: 'bound', createdAt: clock.now() }
  await backend.store.keys.createApi(api)
  const { key, hash, start } = generateKey('sk')
  const keyRecord = { id: newId('key'), hash, start, apiId: api.id, enabled: true, createdAt: clock.now() }
  await backend.store.keys.createKey(keyRecord)
  const verify = async () => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/v1/keys.verifyKey',
      headers: { 'content-type': 'application/json' },
      payload: { key },
    })
    return { status: response.statusCode, body: response.json() }
  }
  const readyz = async () => (await server.app.inject({ method: 'GET', url: '/readyz' })).statusCode
  const metric = async (name: string) => {
    const text = (await server.app.inject({ method: 'GET', url: '/metrics' })).body
    return Number(
      text
        .split('\n')
        .find((line) => line.startsWith(name))
        ?.split(' ')
        .at(-1),
    )
  }
  return { server, clock, faults, verify, readyz, metric }
}

describe('the staleness bound (injected clock)', () => {
  it('trusts the cache while polls confirm it, and not a moment past the bound once they fail', async () => {
    const { server, clock, faults, verify, readyz, metric } = await setUp('read-through')
    expect((await verify()).body).toMatchObject({ valid: true })
    expect(await metric('keygate_verify_cache_misses_total')).toBe(1)

    faults.polls = true
    await expect(server.verifier.pollNow()).rejects.toThrow()
    clock.advance(BOUND)
    expect(server.verifier.ready).toBe(true)
    expect((await verify()).body).toMatchObject({ valid: true })
    expect(await metric('keygate_verify_cache_hits_total')).toBe(1)

    clock.advance(1)
    expect(server.verifier.ready).toBe(false)
    expect(await readyz()).toBe(503)
    // Beyond the bound: the answer comes from the store, not from the cache.
    expect((await verify()).body).toMatchObject({ valid: true })
    expect(await metric('keygate_verify_cache_hits_total')).toBe(1)
    expect(await metric('keygate_stale_answers_total{mode="read-through"')).toBe(1)
    expect(await metric('keygate_staleness_seconds')).toBeCloseTo(5.001, 3)

    // Fail closed: the store is unreachable too.
    faults.reads = true
    const closed = await verify()
    expect(closed.status).toBe(503)
    expect(closed.body.error.code).toBe('UNAVAILABLE')

    faults.polls = false
    faults.reads = false
    await server.verifier.pollNow()
    expect(server.verifier.ready).toBe(true)
    expect(await readyz()).toBe(200)
    await server.close()
  })

  it('serves the stale cache only when told to, counting every such answer', async () => {
    const { server, clock, faults, verify, metric } = await setUp('serve')
    expect((await verify()).body).toMatchObject({ valid: true })
    faults.polls = true
    faults.reads = true
    clock.advance(BOUND + 1)
    expect(server.verifier.ready).toBe(false)
    const served = await verify()
    expect(served.status).toBe(200)
    expect(served.body).toMatchObject({ valid: true })
    expect(await metric('keygate_stale_answers_total{mode="served"')).toBe(1)
    await server.close()
  })

  it('confirms as of when a poll was sent, not when it answered', async () => {
    const { server, clock, verify } = await setUp('read-through')
    await verify()
    clock.advance(BOUND - 10)
    const poll = server.verifier.pollNow()
    clock.advance(BOUND) // the poll "takes" 5 s to answer
    await poll
    // Confirmed as of when it was sent: current until sentAt + BOUND, however long the answer took.
    expect(server.verifier.ready).toBe(true)
    clock.advance(11)
    expect(server.verifier.ready).toBe(false)
    await server.close()
  })
})
