import { describe, expect, it } from 'vitest'
import type { NewAuditEntry } from '../../shared/audit.js'
import { newId } from '../../shared/ids.js'
import type { AuditStore } from '../../shared/store/audit/audit-store.js'

/** The AuditStore contract (audit-store.ts: `store.audit`), run by the store's contract. */
export function auditStoreContract(audit: () => AuditStore): void {
  describe('audit log', () => {
    it('lists entries newest first, page by page after a cursor, and none after 0-0', async () => {
      const keyId = newId('key')
      const entries: NewAuditEntry[] = ['first', 'second', 'third'].map((name) => ({
        at: Date.now(),
        rootKeyId: 'root_contract',
        action: 'keys.updateKey',
        keyId,
        after: { name },
      }))
      for (const entry of entries) await audit().appendAudit(entry)
      const newest = await audit().listAudit({ limit: 2 })
      expect(newest.map(({ id: _id, ...entry }) => entry)).toEqual([entries[2], entries[1]])
      const next = await audit().listAudit({ cursor: newest[1]!.id, limit: 1 })
      expect(next.map(({ id: _id, ...entry }) => entry)).toEqual([entries[0]])
      expect(await audit().listAudit({ cursor: '0-0', limit: 10 })).toEqual([])
    })

    // Stream ids are the server's, and never go back; an entry's `at` is the writer's clock, which may (NTP steps it).
    it('gives entries ids in the order they were appended, even when their times go back', async () => {
      const keyId = newId('key')
      const now = Date.now()
      const entry = (at: number, name: string): NewAuditEntry => ({
        at,
        rootKeyId: 'root_contract',
        action: 'keys.updateKey',
        keyId,
        after: { name },
      })
      const first = entry(now + 1_000, 'first')
      const second = entry(now, 'second, its clock stepped back')
      await audit().appendAudit(first)
      await audit().appendAudit(second)
      const [newest] = await audit().listAudit({ limit: 1 })
      expect(newest).toMatchObject(second)
      const [older] = await audit().listAudit({ cursor: newest!.id, limit: 1 })
      expect(older).toMatchObject(first)
      const [oldest] = await audit().listAudit({ cursor: older!.id, limit: 1 })
      expect(oldest?.keyId).not.toBe(keyId)
    })
  })
}
