import type { StoredEntity } from '../shared/entity.js'
import type { RootKeyRecord } from '../shared/records.js'
import {
  BOOTSTRAP_ROOT_KEY_ADDRESS,
  rootKeyAddress,
  rootKeyEntityOf,
  rootKeyTombstone,
  type BootstrapRootKeyEntity,
} from '../shared/root-key-entity.js'
import { BOOTSTRAP_ID } from '../shared/root-key-principal.js'
import type { EntityStore } from '../shared/store/entity-store.js'
import type { RootKeyStore } from '../shared/store/root-key-store.js'
import type { WriteListener } from './key-writes.js'

// A tombstone write meets at most a racing create of the same entity (a backfill): then it updates.
const TOMBSTONE_ATTEMPTS = 3

/**
 * Root keys as verifiers see them (shared/root-key-entity.ts): every stored root key mirrored as an entity, and the
 * bootstrap key's switch. The root-key store stays the control plane's truth; the two are separate writes (separate
 * slots), ordered so that a crash between them, or another control plane racing, can only leave verifiers refusing a
 * root key the control plane accepts — never accepting one it refuses:
 * - a root key is published after the store has it, and tombstoned before the store revokes (or rolls) it;
 * - a tombstone is final: publishing only creates, so neither a late create nor a backfill that listed the root key
 *   before it was revoked can bring it back;
 * - the bootstrap key is turned off here before the store, and back on only after the store, and only if nobody
 *   turned it off again meanwhile.
 */
export class RootKeyEntities {
  constructor(
    private readonly store: EntityStore,
    private readonly onWrite: WriteListener = () => {},
  ) {}

  /** Verifiers accept the root key from now on; one already published, or tombstoned, is left as it is. */
  async publish(record: RootKeyRecord): Promise<void> {
    const write = await this.store.writeEntity(
      rootKeyAddress(record.hash),
      record.id,
      'created',
      rootKeyEntityOf(record),
    )
    if (typeof write !== 'string') this.onWrite(write)
  }

  /** Verifiers refuse the root key from now on (within the bound), whatever was published of it, if anything. */
  async tombstone(record: RootKeyRecord): Promise<void> {
    const address = rootKeyAddress(record.hash)
    for (let attempt = 0; attempt < TOMBSTONE_ATTEMPTS; attempt++) {
      // No expected revision: whatever is there becomes the tombstone; if nothing is, one is created.
      for (const kind of ['updated', 'created'] as const) {
        const write = await this.store.writeEntity(address, record.id, kind, rootKeyTombstone(record))
        if (typeof write !== 'string') return this.onWrite(write)
      }
    }
    throw new Error(`root key ${record.id}: its tombstone kept meeting concurrent writes`)
  }

  /** Before the store turns the bootstrap key off: verifiers refuse it first. */
  async disableBootstrap(): Promise<void> {
    const disabled: BootstrapRootKeyEntity = { disabled: true }
    for (let attempt = 0; attempt < TOMBSTONE_ATTEMPTS; attempt++) {
      for (const kind of ['updated', 'created'] as const) {
        const write = await this.store.writeEntity(BOOTSTRAP_ROOT_KEY_ADDRESS, BOOTSTRAP_ID, kind, disabled)
        if (typeof write !== 'string') return this.onWrite(write)
      }
    }
    throw new Error('the bootstrap root key switch kept meeting concurrent writes')
  }

  /** The switch as it is now: read before the store turns the bootstrap key back on (enableBootstrap takes it). */
  bootstrapSwitch(): Promise<StoredEntity<BootstrapRootKeyEntity> | null> {
    return this.store.getEntity<BootstrapRootKeyEntity>(BOOTSTRAP_ROOT_KEY_ADDRESS)
  }

  /**
   * After the store turned the bootstrap key back on: verifiers accept it again, unless the switch changed since
   * `seen` (someone turned it off meanwhile: their store write may still be coming, so it stays off here).
   */
  async enableBootstrap(seen: StoredEntity<BootstrapRootKeyEntity> | null): Promise<void> {
    if (seen === null || !seen.doc.disabled) return
    const write = await this.store.writeEntity(BOOTSTRAP_ROOT_KEY_ADDRESS, BOOTSTRAP_ID, 'deleted', null, seen.rev)
    if (typeof write !== 'string') this.onWrite(write)
  }

  /**
   * Publishes every stored root key that has no entity yet — root keys stored by a release before verifiers checked
   * them, or by a create cut short between its two writes — and turns the bootstrap key off for verifiers if the
   * store has it off. Only ever adds what the store holds (a tombstone stays), so it is safe beside any other write.
   */
  async backfill(rootKeys: Pick<RootKeyStore, 'listRootKeys' | 'isBootstrapRootKeyDisabled'>): Promise<void> {
    for (const record of await rootKeys.listRootKeys()) await this.publish(record)
    if ((await rootKeys.isBootstrapRootKeyDisabled()) && !(await this.bootstrapSwitch())?.doc.disabled) {
      await this.disableBootstrap()
    }
  }
}
