import { pino } from 'pino'
import { auditedKey } from '../../control-plane/keys/key-response.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AuditLog, CLI_ACTOR } from '../../control-plane/audit/audit-log.js'
import { StoredRootKeys } from '../../control-plane/root-keys/stored-root-keys.js'
import { RootKeyAuthenticator } from '../../shared/root-keys/root-key-authenticator.js'
import { RootKeyUse } from '../../control-plane/root-keys/root-key-use.js'
import { RootKeys } from '../../control-plane/root-keys/root-keys.js'
import { systemClock } from '../../shared/clock.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { rootKeyAddress } from '../../shared/root-keys/root-key-entity.js'
import type { Store } from '../../shared/store/store.js'
import { CachedRootKeys, type EntitySource } from '../../verifier/cached-root-keys.js'
import { openBackend, TEST_ROOT_KEY, type Backend } from '../support/apps.js'
import { useRedisServer } from '../support/redis-server.js'
import { overriding } from '../support/store-overrides.js'

/**
 * The two writes of each root-key change — the root-key store (the control plane's truth) and the entity verifiers
 * read — and a crash between them: whichever write is cut off, no root key is left that a verifier accepts and the
 * control plane refuses. A backfill afterwards (a control plane starting) never makes it so either. The verifier's
 * side is read straight from the store here: how fast a verifier learns of an entity is the revocation bound's part.
 */
const redis = useRedisServer()
const silent = pino({ level: 'silent' })

/** The store, with the `nth` call of `method` from now on crashing the writer (nothing written by that call). */
function crashing(
  store: Store,
  method: 'createRootKey' | 'revokeRootKey' | 'rollRootKey' | 'writeEntity' | 'setBootstrapRootKeyDisabled',
  nth = 1,
): Store {
  let calls = 0
  const part = method === 'writeEntity' ? 'entities' : 'rootKeys'
  const own = store[part] as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>
  const crash = async (...args: unknown[]) => {
    if (++calls === nth) throw new Error('crash (injected)')
    return own[method]!.apply(own, args)
  }
  return overriding(store, { [part]: { [method]: crash } })
}

/** The store, noting the address of every entity written through it. */
function noting(store: Store, written: string[]): Store {
  return overriding(store, {
    entities: {
      writeEntity: (address, ...rest) => {
        written.push(address)
        return store.entities.writeEntity(address, ...rest)
      },
    },
  })
}

for (const storeKind of ['memory', 'redis'] as const) {
  describe(`root-key write order on the ${storeKind} store`, () => {
    let backend: Backend
    let store: Store
    beforeAll(async () => {
      backend = await openBackend(storeKind === 'redis' ? redis.url : undefined)
      store = backend.store
    })
    afterAll(() => backend.close())

    const rootKeysOn = (on: Store) =>
      new RootKeys({ store: on, audit: new AuditLog(on.audit, systemClock, silent, auditedKey), clock: systemClock })
    const controlPlane = () =>
      new RootKeyAuthenticator(
        new StoredRootKeys(store.rootKeys, new RootKeyUse(store.rootKeys, systemClock, silent)),
        TEST_ROOT_KEY,
      )
    // The verifier's view once current: the entities as stored.
    const current: EntitySource = {
      entity: async <T>(address: string) => (await store.entities.getEntity<T>(address))?.doc ?? null,
    }
    const verifier = () => new RootKeyAuthenticator(new CachedRootKeys(current), TEST_ROOT_KEY)
    const accepts = async (check: () => unknown) => {
      try {
        await check()
        return true
      } catch {
        return false
      }
    }
    /** Who accepts the root key now. */
    async function seen(key: string): Promise<{ controlPlane: boolean; verifier: boolean }> {
      const header = `Bearer ${key}`
      return {
        controlPlane: await accepts(() => controlPlane().principalOf(header)),
        verifier: await accepts(() => verifier().principalOf(header)),
      }
    }
    /** seen(), never the one state not allowed: the verifier accepting what the control plane refuses. */
    async function acceptedBy(key: string): Promise<{ controlPlane: boolean; verifier: boolean }> {
      const now = await seen(key)
      expect(now.verifier && !now.controlPlane, 'a verifier accepts a root key the control plane refuses').toBe(false)
      return now
    }
    const backfill = () => rootKeysOn(store).backfill()

    it('without a crash both accept a created root key, and both refuse it once revoked', async () => {
      const { record, key } = await rootKeysOn(store).create(CLI_ACTOR, { permissions: ['api.*.verify_key'] })
      expect(await acceptedBy(key)).toEqual({ controlPlane: true, verifier: true })
      await rootKeysOn(store).revoke(CLI_ACTOR, record.id)
      expect(await acceptedBy(key)).toEqual({ controlPlane: false, verifier: false })
      await backfill()
      expect(await acceptedBy(key)).toEqual({ controlPlane: false, verifier: false })
    })

    it('a root key revoked or rolled by an earlier release (the store alone, no tombstone): the next reconcile tombstones it', async () => {
      const revoked = await rootKeysOn(store).create(CLI_ACTOR, { permissions: ['api.*.verify_key'] })
      const rolled = await rootKeysOn(store).create(CLI_ACTOR, { permissions: ['api.*.verify_key'] })
      await backfill()
      // What a control plane or CLI of an earlier release does: only the store's write.
      await store.rootKeys.revokeRootKey(revoked.record.id)
      const next = generateRootKey()
      await store.rootKeys.rollRootKey(rolled.record.id, { ...rolled.record, id: `${rolled.record.id}x`, ...next })
      expect((await seen(revoked.key)).verifier).toBe(true)
      expect((await seen(rolled.key)).verifier).toBe(true)
      // A control plane of this release reconciles every second (control-plane/root-keys/root-key-backfill.ts).
      await backfill()
      expect(await acceptedBy(revoked.key)).toEqual({ controlPlane: false, verifier: false })
      expect(await acceptedBy(rolled.key)).toEqual({ controlPlane: false, verifier: false })
      expect(await acceptedBy(next.key)).toEqual({ controlPlane: true, verifier: true })
      await rootKeysOn(store).revoke(CLI_ACTOR, `${rolled.record.id}x`)
    })

    it('a change cut off at its first write changes nothing', async () => {
      const published: string[] = []
      await expect(
        rootKeysOn(noting(crashing(store, 'createRootKey'), published)).create(CLI_ACTOR, {
          name: 'never',
          permissions: ['*'],
        }),
      ).rejects.toThrow('crash')
      expect((await store.rootKeys.listRootKeys()).some((record) => record.name === 'never')).toBe(false)
      expect(published).toEqual([])
      const { record, key } = await rootKeysOn(store).create(CLI_ACTOR, { permissions: ['api.*.verify_key'] })
      for (const change of [
        (on: RootKeys) => on.revoke(CLI_ACTOR, record.id),
        (on: RootKeys) => on.roll(CLI_ACTOR, record.id),
      ]) {
        await expect(change(rootKeysOn(crashing(store, 'writeEntity')))).rejects.toThrow('crash')
        expect(await acceptedBy(key)).toEqual({ controlPlane: true, verifier: true })
      }
      await rootKeysOn(store).create(CLI_ACTOR, { permissions: ['*'] })
      await expect(rootKeysOn(crashing(store, 'writeEntity')).setBootstrap(CLI_ACTOR, false)).rejects.toThrow('crash')
      expect(await acceptedBy(TEST_ROOT_KEY)).toEqual({ controlPlane: true, verifier: true })
      await rootKeysOn(store).setBootstrap(CLI_ACTOR, false)
      await expect(
        rootKeysOn(crashing(store, 'setBootstrapRootKeyDisabled')).setBootstrap(CLI_ACTOR, true),
      ).rejects.toThrow('crash')
      expect(await acceptedBy(TEST_ROOT_KEY)).toEqual({ controlPlane: false, verifier: false })
      await rootKeysOn(store).setBootstrap(CLI_ACTOR, true)
      await rootKeysOn(store).revoke(CLI_ACTOR, record.id)
    })

    it('create cut off before the entity: verifiers refuse it until a backfill publishes it', async () => {
      await expect(
        rootKeysOn(crashing(store, 'writeEntity')).create(CLI_ACTOR, { name: 'cut', permissions: ['*'] }),
      ).rejects.toThrow('crash')
      const stored = (await store.rootKeys.listRootKeys()).find((record) => record.name === 'cut')!
      expect(await store.entities.getEntity(rootKeyAddress(stored.hash))).toBeNull()
      await backfill()
      expect((await store.entities.getEntity(rootKeyAddress(stored.hash)))?.doc).toEqual({
        id: stored.id,
        permissions: ['*'],
      })
    })

    it('revoke cut off after the tombstone: the control plane still accepts it, verifiers refuse it, a backfill too', async () => {
      const { record, key } = await rootKeysOn(store).create(CLI_ACTOR, { permissions: ['api.*.verify_key'] })
      await expect(rootKeysOn(crashing(store, 'revokeRootKey')).revoke(CLI_ACTOR, record.id)).rejects.toThrow('crash')
      expect(await acceptedBy(key)).toEqual({ controlPlane: true, verifier: false })
      await backfill()
      expect(await acceptedBy(key)).toEqual({ controlPlane: true, verifier: false })
      // The revoke, run again, completes.
      await rootKeysOn(store).revoke(CLI_ACTOR, record.id)
      expect(await acceptedBy(key)).toEqual({ controlPlane: false, verifier: false })
    })

    it('roll cut off at each step: the old key is never accepted by verifiers alone, the new one once stored and published', async () => {
      const first = await rootKeysOn(store).create(CLI_ACTOR, { name: 'rolled', permissions: ['api.*.verify_key'] })
      // Before the store rolls: the old one is tombstoned, still the control plane's.
      await expect(rootKeysOn(crashing(store, 'rollRootKey')).roll(CLI_ACTOR, first.record.id)).rejects.toThrow('crash')
      expect(await acceptedBy(first.key)).toEqual({ controlPlane: true, verifier: false })
      // After the store rolled, before the new one is published (the second entity write).
      await expect(rootKeysOn(crashing(store, 'writeEntity', 2)).roll(CLI_ACTOR, first.record.id)).rejects.toThrow(
        'crash',
      )
      expect(await acceptedBy(first.key)).toEqual({ controlPlane: false, verifier: false })
      const next = (await store.rootKeys.listRootKeys()).find((record) => record.name === 'rolled')!
      expect(next.id).not.toBe(first.record.id)
      expect(await store.entities.getEntity(rootKeyAddress(next.hash))).toBeNull()
      await backfill()
      expect(await store.entities.getEntity(rootKeyAddress(next.hash))).not.toBeNull()
      expect(await acceptedBy(first.key)).toEqual({ controlPlane: false, verifier: false })
    })

    it('bootstrap off and on cut off between the writes: verifiers refuse it, the control plane may not yet', async () => {
      await rootKeysOn(store).create(CLI_ACTOR, { permissions: ['*'] })
      await expect(
        rootKeysOn(crashing(store, 'setBootstrapRootKeyDisabled')).setBootstrap(CLI_ACTOR, false),
      ).rejects.toThrow('crash')
      expect(await acceptedBy(TEST_ROOT_KEY)).toEqual({ controlPlane: true, verifier: false })
      await rootKeysOn(store).setBootstrap(CLI_ACTOR, false)
      expect(await acceptedBy(TEST_ROOT_KEY)).toEqual({ controlPlane: false, verifier: false })
      // On again, cut off before verifiers are told.
      await expect(rootKeysOn(crashing(store, 'writeEntity')).setBootstrap(CLI_ACTOR, true)).rejects.toThrow('crash')
      expect(await acceptedBy(TEST_ROOT_KEY)).toEqual({ controlPlane: true, verifier: false })
      await rootKeysOn(store).setBootstrap(CLI_ACTOR, true)
      expect(await acceptedBy(TEST_ROOT_KEY)).toEqual({ controlPlane: true, verifier: true })
    })

    it('a backfill turns the bootstrap key off for verifiers when the store has it off (an earlier release did it)', async () => {
      await store.rootKeys.setBootstrapRootKeyDisabled(true)
      // What an upgrade starts from: the switch only in the root-key store, which verifiers do not read.
      expect(await seen(TEST_ROOT_KEY)).toEqual({ controlPlane: false, verifier: true })
      await backfill()
      expect(await acceptedBy(TEST_ROOT_KEY)).toEqual({ controlPlane: false, verifier: false })
      await rootKeysOn(store).setBootstrap(CLI_ACTOR, true)
      expect(await acceptedBy(TEST_ROOT_KEY)).toEqual({ controlPlane: true, verifier: true })
    })

    it('turning the bootstrap key on leaves it off for verifiers if it was turned off meanwhile', async () => {
      const rootKeys = rootKeysOn(store)
      await rootKeys.setBootstrap(CLI_ACTOR, false)
      // Between reading the switch and writing it, another writer turns it off again (its store write still to come).
      const interleaved = overriding(store, {
        rootKeys: {
          setBootstrapRootKeyDisabled: async (disabled: boolean) => {
            await store.rootKeys.setBootstrapRootKeyDisabled(disabled)
            await rootKeysOn(store).setBootstrap(CLI_ACTOR, false)
          },
        },
      })
      await rootKeysOn(interleaved).setBootstrap(CLI_ACTOR, true)
      expect(await acceptedBy(TEST_ROOT_KEY)).toEqual({ controlPlane: false, verifier: false })
      await rootKeys.setBootstrap(CLI_ACTOR, true)
    })
  })
}
