import { afterEach, describe, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import type { ChangeFeed } from '../../shared/feed/change-feed.js'
import { roleAddress } from '../../shared/rbac.js'
import { rootKeyAddress } from '../../shared/root-keys/root-key-entity.js'
import { hashKey } from '../../shared/keys/key-material.js'
import { LOG_TRIMMED } from '../../shared/store/change-log/change-log-store.js'
import type { Store } from '../../shared/store/store.js'
import { overriding } from '../support/store-overrides.js'
import {
  ManualClock,
  openBackend,
  startTestControlPlane,
  startTestVerifier,
  TEST_ROOT_KEY,
  type Backend,
  type TestServer,
} from '../support/apps.js'

/**
 * The mechanisms that keep a verifier's entities (roles here) within the revocation bound when events alone do not:
 * a read in flight during a change, a shard whose log cannot be replayed, and reads beyond the staleness bound. The
 * verifier under test hears of changes only by polling (a deaf feed), so each test decides when it learns them.
 */

const manualPolls = { maxStalenessMs: 5_000, pollIntervalMs: 3_600_000 }
const deaf: ChangeFeed = {
  kind: 'memory',
  subscribe: async (handlers) => handlers.onSubscribed(),
  close: async () => {},
}

interface Faults {
  /** Set: the next read of this address sees the store as it is, then waits for `release` before answering. */
  holdRead?: { address: string; seen: () => void; release: Promise<void> }
  trimLogs?: boolean
  failReplays?: boolean
}

/** The backend's store with faults the test switches on. */
function faulty(backend: Backend, faults: Faults): Store {
  return overriding(backend.store, {
    entities: {
      getEntity: async <T>(address: string) => {
        const found = await backend.store.entities.getEntity<T>(address)
        const hold = faults.holdRead
        if (hold?.address === address) {
          faults.holdRead = undefined
          hold.seen()
          await hold.release
        }
        return found
      },
    },
    changes: {
      readChanges: async (...args) => {
        if (faults.failReplays) throw new StoreUnavailableError('log unreachable (injected)')
        if (faults.trimLogs) return LOG_TRIMMED
        return backend.store.changes.readChanges(...args)
      },
    },
  })
}

const running: { close(): Promise<unknown> }[] = []
afterEach(async () => {
  for (const server of running.splice(0).reverse()) await server.close()
})

async function setUp(options: { clock?: ManualClock } = {}) {
  const backend = await openBackend()
  running.push(backend)
  const faults: Faults = {}
  const controlPlane = await startTestControlPlane({ backend })
  running.push(controlPlane)
  const verifier = await startTestVerifier({
    backend: { ...backend, store: faulty(backend, faults), feed: deaf },
    sync: manualPolls,
    ...(options.clock ? { clock: options.clock } : {}),
  })
  running.push(verifier)
  const post = async (operation: string, body: unknown) => {
    const response = await controlPlane.app.inject({
      method: 'POST',
      url: `/v1/${operation}`,
      headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
      payload: body as object,
    })
    expect(response.statusCode, response.body).toBe(200)
    return response.json<Record<string, any>>()
  }
  const suffix = Math.random().toString(36).slice(2, 10)
  const slug = `reports.read.${suffix}`
  const { permissionId } = await post('permissions.createPermission', { name: slug })
  const { roleId } = await post('permissions.createRole', {
    name: `analyst-${suffix}`,
    permissions: [{ id: permissionId }],
  })
  const { apiId } = await post('apis.createApi', { name: 'entity bound' })
  const { key } = await post('keys.createKey', { apiId, roles: [`analyst-${suffix}`] })
  const query = { permissions: slug }
  const verdict = (server: TestServer) => server.verifier.verify(key, query)
  /** The role stops granting the permission: one write, which the verifier under test has not heard of yet. */
  const revoke = () => post('permissions.setRolePermissions', { roleId, permissions: [] })
  await verifier.verifier.pollNow()
  return { verifier, faults, roleId, verdict, revoke, post }
}

describe('entities within the revocation bound', () => {
  it('a role read in flight while the role changes is read again, never cached older than the change', async () => {
    const { verifier, faults, roleId, verdict, revoke } = await setUp()
    let seen!: () => void
    let release!: () => void
    const readSeen = new Promise<void>((resolve) => (seen = resolve))
    faults.holdRead = { address: roleAddress(roleId), seen, release: new Promise((resolve) => (release = resolve)) }
    // The first verification misses the role and reads it: the read sees the role granting the permission…
    const first = Promise.resolve(verdict(verifier))
    await readSeen
    // …and answers only after the change happened and the verifier learnt of it.
    await revoke()
    await verifier.verifier.pollNow()
    release()
    await first
    expect(await verdict(verifier)).toMatchObject({ valid: false, code: 'INSUFFICIENT_PERMISSIONS' })
  })

  it('a shard whose changes cannot be replayed loses its entities too', async () => {
    const { verifier, faults, verdict, revoke } = await setUp()
    expect(await verdict(verifier)).toMatchObject({ valid: true })
    await revoke()
    faults.trimLogs = true
    await verifier.verifier.pollNow()
    faults.trimLogs = false
    expect(await verdict(verifier)).toMatchObject({ valid: false, code: 'INSUFFICIENT_PERMISSIONS' })
  })

  it('beyond the staleness bound a key’s roles are read afresh, as the key is', async () => {
    const clock = new ManualClock(Date.now())
    const { verifier, faults, verdict, revoke } = await setUp({ clock })
    expect(await verdict(verifier)).toMatchObject({ valid: true })
    await revoke()
    faults.failReplays = true
    await expect(verifier.verifier.pollNow()).rejects.toThrow('log unreachable')
    clock.advance(manualPolls.maxStalenessMs + 1)
    expect(verifier.verifier.ready).toBe(false)
    expect(await verdict(verifier)).toMatchObject({ valid: false, code: 'INSUFFICIENT_PERMISSIONS' })
  })

  /** A key of an api without a list, verified (memoised) from 10.0.0.1; `narrow` lets only 192.0.2.0/24 in. */
  async function allowListed(clock?: ManualClock) {
    const setup = await setUp(clock ? { clock } : {})
    const { apiId } = await setup.post('apis.createApi', { name: 'allow-listed' })
    const { key } = await setup.post('keys.createKey', { apiId })
    const client = { socket: { remoteAddress: '10.0.0.1' }, headers: {} }
    const fromTen = () => setup.verifier.verifier.verify(key, {}, client)
    expect(await fromTen()).toMatchObject({ valid: true })
    expect(await fromTen()).toBe(await fromTen())
    const narrow = () => setup.post('apis.updateApi', { apiId, ipWhitelist: ['192.0.2.0/24'] })
    return { ...setup, fromTen, narrow }
  }

  it("a shard whose changes cannot be replayed loses its api's allow-list too", async () => {
    const { verifier, faults, fromTen, narrow } = await allowListed()
    await narrow()
    faults.trimLogs = true
    await verifier.verifier.pollNow()
    faults.trimLogs = false
    expect(await fromTen()).toMatchObject({ valid: false, code: 'FORBIDDEN' })
  })

  it("beyond the staleness bound a key's api allow-list is read afresh, as the key is", async () => {
    const clock = new ManualClock(Date.now())
    const { verifier, faults, fromTen, narrow } = await allowListed(clock)
    await narrow()
    faults.failReplays = true
    await expect(verifier.verifier.pollNow()).rejects.toThrow('log unreachable')
    clock.advance(manualPolls.maxStalenessMs + 1)
    expect(verifier.verifier.ready).toBe(false)
    expect(await fromTen()).toMatchObject({ valid: false, code: 'FORBIDDEN' })
  })

  it('beyond the staleness bound a rate-limit override is read afresh too', async () => {
    const clock = new ManualClock(Date.now())
    const { verifier, faults, post } = await setUp({ clock })
    const namespace = `bound-${Math.random().toString(36).slice(2, 10)}`
    const override = (limit: number) =>
      post('ratelimits.setOverride', { namespaceName: namespace, identifier: 'user_1', limit, duration: 60_000 })
    const call = { namespace, identifier: 'user_1', limit: 1_000, duration: 60_000, cost: 1, async: true }
    await override(100)
    await verifier.verifier.pollNow()
    expect(await verifier.ratelimits.limit(call)).toMatchObject({ ok: true, limit: 100 })
    await override(1)
    faults.failReplays = true
    await expect(verifier.verifier.pollNow()).rejects.toThrow('log unreachable')
    clock.advance(manualPolls.maxStalenessMs + 1)
    expect(await verifier.ratelimits.limit(call)).toMatchObject({ limit: 1 })
  })
  it('a root-key read in flight while the root key is revoked is read again: never cached as still valid', async () => {
    const { verifier, faults, post } = await setUp()
    const { rootKeyId, key: root } = await post('rootKeys.createRootKey', { permissions: ['api.*.verify_key'] })
    await verifier.verifier.pollNow()
    const address = rootKeyAddress(hashKey(root))
    let seen!: () => void
    let release!: () => void
    const readSeen = new Promise<void>((resolve) => (seen = resolve))
    faults.holdRead = { address, seen, release: new Promise<void>((resolve) => (release = resolve)) }
    // The verifier's first look at the root key: a miss, read while the root key is still live…
    const first = verifier.verifier.entity(address)
    await readSeen
    // …then revoked, and the verifier hears of it while that read is in flight.
    await post('rootKeys.revokeRootKey', { rootKeyId })
    await verifier.verifier.pollNow()
    release()
    expect(await first).toEqual({ id: rootKeyId, revoked: true })
    expect(await verifier.verifier.entity(address)).toEqual({ id: rootKeyId, revoked: true })
  })

  it('beyond the staleness bound a root key is read afresh: a revoke the verifier never heard of is refused', async () => {
    const clock = new ManualClock(Date.now())
    const { verifier, faults, post } = await setUp({ clock })
    const { rootKeyId, key: root } = await post('rootKeys.createRootKey', { permissions: ['api.*.verify_key'] })
    await verifier.verifier.pollNow()
    const v2 = () =>
      verifier.app.inject({
        method: 'POST',
        url: '/v2/keys.verifyKey',
        headers: { authorization: `Bearer ${root}`, 'content-type': 'application/json' },
        payload: { key: 'sk_not_a_key' },
      })
    expect((await v2()).statusCode).toBe(200)
    await post('rootKeys.revokeRootKey', { rootKeyId })
    faults.failReplays = true
    await expect(verifier.verifier.pollNow()).rejects.toThrow('log unreachable')
    clock.advance(manualPolls.maxStalenessMs + 1)
    expect(verifier.verifier.ready).toBe(false)
    expect((await v2()).statusCode).toBe(401)
  })
})
