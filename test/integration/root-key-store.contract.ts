import { describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey, hashKey } from '../../shared/keys/key-material.js'
import type { RootKeyRecord } from '../../shared/keys/records.js'
import type { RootKeyStore } from '../../shared/store/root-keys/root-key-store.js'

/** A new root key's record (ids made a millisecond apart sort in creation order). */
export function newRootKey(extra: Partial<RootKeyRecord> = {}, at = Date.now()): RootKeyRecord {
  const { hash, start } = generateRootKey()
  return { id: newId('root', at), hash, start, permissions: ['api.*.read_key'], createdAt: at, ...extra }
}

/** The RootKeyStore contract (root-key-store.ts), run by the Store contract on every implementation. */
export function rootKeyStoreContract(store: () => RootKeyStore): void {
  describe('root keys', () => {
    it('creates root keys, found by hash and by id; unknown ones are null', async () => {
      const record = newRootKey({ name: 'ci', permissions: ['*'] })
      expect(await store().createRootKey(record)).toBe(true)
      expect(await store().getRootKeyByHash(record.hash)).toEqual(record)
      expect(await store().getRootKeyById(record.id)).toEqual(record)
      expect(await store().getRootKeyByHash(hashKey('other'))).toBeNull()
      expect(await store().getRootKeyById('root_missing')).toBeNull()
    })

    it('refuses a second root key with the same hash or the same id, writing nothing', async () => {
      const record = newRootKey()
      await store().createRootKey(record)
      expect(await store().createRootKey({ ...newRootKey(), hash: record.hash })).toBe(false)
      const sameId = newRootKey({ id: record.id })
      expect(await store().createRootKey(sameId)).toBe(false)
      expect(await store().getRootKeyByHash(sameId.hash)).toBeNull()
      expect(await store().getRootKeyById(record.id)).toEqual(record)
    })

    it('lists every root key oldest first, with its last use', async () => {
      const t = Date.now()
      const older = newRootKey({ name: 'older' }, t - 2)
      const newer = newRootKey({ name: 'newer' }, t - 1)
      await store().createRootKey(newer)
      await store().createRootKey(older)
      await store().touchRootKey(newer.hash, t)
      const listed = await store().listRootKeys()
      const ids = listed.map((k) => k.id)
      expect(ids.indexOf(older.id)).toBeLessThan(ids.indexOf(newer.id))
      expect(ids).toEqual([...ids].sort())
      expect(listed.find((k) => k.id === newer.id)).toEqual({ ...newer, lastUsedAt: t })
      expect(listed.find((k) => k.id === older.id)).toEqual(older)
    })

    it('revokes a root key: gone by hash, by id and from the list at once; a second revoke finds nothing', async () => {
      const record = newRootKey()
      await store().createRootKey(record)
      expect(await store().revokeRootKey(record.id)).toEqual(record)
      expect(await store().getRootKeyByHash(record.hash)).toBeNull()
      expect(await store().getRootKeyById(record.id)).toBeNull()
      expect((await store().listRootKeys()).map((k) => k.id)).not.toContain(record.id)
      expect(await store().revokeRootKey(record.id)).toBeNull()
      expect(await store().revokeRootKey('root_missing')).toBeNull()
    })

    it('rolls a root key in one step: the new one stored, the old one gone; nothing written for an unknown id', async () => {
      const old = newRootKey({ name: 'deploy', permissions: ['api.*.create_key'] })
      await store().createRootKey(old)
      await store().touchRootKey(old.hash, old.createdAt + 5)
      const next = newRootKey({ name: 'deploy', permissions: ['api.*.create_key'] })
      expect(await store().rollRootKey(old.id, next)).toEqual({ ...old, lastUsedAt: old.createdAt + 5 })
      expect(await store().getRootKeyByHash(old.hash)).toBeNull()
      expect(await store().getRootKeyById(next.id)).toEqual(next)
      const orphan = newRootKey()
      expect(await store().rollRootKey(old.id, orphan)).toBeNull()
      expect(await store().getRootKeyByHash(orphan.hash)).toBeNull()
    })

    it('records uses: only forward in time, and never for a revoked root key', async () => {
      const record = newRootKey()
      await store().createRootKey(record)
      await store().touchRootKey(record.hash, 2_000)
      await store().touchRootKey(record.hash, 1_000)
      expect((await store().getRootKeyByHash(record.hash))?.lastUsedAt).toBe(2_000)
      await store().revokeRootKey(record.id)
      await store().touchRootKey(record.hash, 3_000)
      expect(await store().getRootKeyByHash(record.hash)).toBeNull()
      expect((await store().listRootKeys()).map((k) => k.hash)).not.toContain(record.hash)
    })

    it('keeps whether the bootstrap root key is turned off (on until it is)', async () => {
      expect(await store().isBootstrapRootKeyDisabled()).toBe(false)
      await store().setBootstrapRootKeyDisabled(true)
      expect(await store().isBootstrapRootKeyDisabled()).toBe(true)
      await store().setBootstrapRootKeyDisabled(false)
      expect(await store().isBootstrapRootKeyDisabled()).toBe(false)
    })
  })
}
