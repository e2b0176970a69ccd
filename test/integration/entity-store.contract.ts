import { beforeAll, describe, expect, it } from 'vitest'
import type { ChangeEvent } from '../../shared/change-event.js'
import { entityAddress, entityShard } from '../../shared/entity.js'
import { newId } from '../../shared/ids.js'
import { LOG_TRIMMED } from '../../shared/store/change-log/change-log-store.js'
import type { Store } from '../../shared/store/store.js'
import { waitFor } from '../support/wait-for.js'

/** The EntityStore contract (entity-store.ts: `store.entities`), run by the store's contract. */
export function entityStoreContract(opened: () => Store, events: readonly ChangeEvent[]): void {
  describe('entities, indexes and names', () => {
    let store: Store
    beforeAll(() => void (store = opened()))

    it('writes an entity in its shard: created once, updated at its revision, deleted, each logged and published', async () => {
      const id = newId('role')
      const address = entityAddress('role', id)
      const shard = entityShard(address)
      const created = await store.entities.writeEntity(address, id, 'created', { id, name: 'contract role' })
      if (typeof created === 'string') throw new Error(created)
      expect(created.event).toMatchObject({ kind: 'created', shard, keyId: id, hash: address, apiId: '' })
      expect(await store.entities.getEntity(address)).toEqual({ doc: { id, name: 'contract role' }, rev: created.rev })
      expect(await store.entities.writeEntity(address, id, 'created', { id })).toBe('exists')
      expect(await store.entities.writeEntity(address, id, 'updated', { id, name: 'stale' }, created.rev - 1)).toBe(
        'conflict',
      )
      const updated = await store.entities.writeEntity(address, id, 'updated', { id, name: 'renamed' }, created.rev)
      if (typeof updated === 'string') throw new Error(updated)
      expect(updated.rev).toBeGreaterThan(created.rev)
      expect((await store.entities.getEntity<{ name: string }>(address))!.doc.name).toBe('renamed')
      const deleted = await store.entities.writeEntity(address, id, 'deleted', null)
      if (typeof deleted === 'string') throw new Error(deleted)
      expect(await store.entities.getEntity(address)).toBeNull()
      expect(await store.entities.writeEntity(address, id, 'updated', { id })).toBe('missing')
      // The same log and revision sequence as keys: a verifier replays entity changes as it does key changes.
      const replayed = await store.changes.readChanges(shard, created.rev - 1, 10)
      if (replayed === LOG_TRIMMED) throw new Error('trimmed')
      expect(replayed.filter((e) => e.hash === address).map((e) => [e.kind, e.rev])).toEqual([
        ['created', created.rev],
        ['updated', updated.rev],
        ['deleted', deleted.rev],
      ])
      await waitFor(() => events.some((e) => e.hash === address && e.kind === 'deleted'), 'the delete to be published')
    })

    it('claims unique names, moves them only from their holder, and lists indexes by member with a cursor', async () => {
      const scope = `contract-${newId('req')}`
      expect(await store.entities.claimName(scope, 'editor', 'role_a')).toBeNull()
      expect(await store.entities.claimName(scope, 'editor', 'role_b')).toBe('role_a')
      expect(await store.entities.readName(scope, 'editor')).toBe('role_a')
      expect(await store.entities.replaceName(scope, 'editor', 'role_b', 'role_c')).toBe(false)
      expect(await store.entities.replaceName(scope, 'editor', 'role_a', 'role_c')).toBe(true)
      await store.entities.releaseName(scope, 'editor', 'role_a')
      expect(await store.entities.readName(scope, 'editor')).toBe('role_c')
      await store.entities.releaseName(scope, 'editor', 'role_c')
      expect(await store.entities.readName(scope, 'editor')).toBeNull()

      for (const member of ['m3', 'm1', 'm2', 'm4']) await store.entities.addToIndex(scope, member)
      await store.entities.removeFromIndex(scope, 'm4')
      const first = await store.entities.listIndex(scope, { limit: 2 })
      expect(first).toEqual({ members: ['m1', 'm2'], total: 3, cursor: 'm2' })
      expect(await store.entities.listIndex(scope, { limit: 2, cursor: first.cursor })).toEqual({
        members: ['m3'],
        total: 3,
      })
    })
  })
}
