import type { StoredEntity } from '../../shared/entity.js'
import type { RootKeyRecord } from '../../shared/keys/records.js'
import {
  BOOTSTRAP_ROOT_KEY_ADDRESS,
  rootKeyAddress,
  rootKeyEntityOf,
  livePermissions,
  rootKeyTombstone,
  type BootstrapRootKeyEntity,
  type RootKeyEntity,
} from '../../shared/root-keys/root-key-entity.js'
import { BOOTSTRAP_ID } from '../../shared/root-keys/root-key-principal.js'
import type { EntityStore } from '../../shared/store/entities/entity-store.js'
import type { RootKeyStore } from '../../shared/store/root-keys/root-key-store.js'
import type { WriteListener } from '../write-listener.js'

// A tombstone write meets at most a racing create of the same entity (a backfill): then it updates.
const TOMBSTONE_ATTEMPTS = 3

/** The hashes of every root key ever published: what a reconcile checks against the store. */
const PUBLISHED_INDEX = 'rootkeys:published'

/** What a reconcile found in the root-key store. */
export interface RootKeysFound {
  stored: number
  bootstrapDisabled: boolean
}

/**
 * Root keys as verifiers see them (shared/root-keys/root-key-entity.ts): every stored root key mirrored as an entity,
 * and the bootstrap key's switch. The root-key store stays the control plane's truth; the two are separate writes
 * (separate slots), ordered so that a crash between them, or another control plane racing, can only leave verifiers
 * refusing a root key the control plane accepts — never accepting one it refuses:
 * - a root key is published after the store has it, and tombstoned before the store revokes (or rolls) it;
 * - a tombstone is final: publishing only creates, so neither a late create nor a backfill that listed the root key
 *   before it was revoked can bring it back;
 * - the bootstrap key is turned off here before the store, and back on only after the store, and only if nobody
 *   turned it off again meanwhile.
 */
export class RootKeyEntities {
  /** Root keys this process has published (or found published): a periodic backfill publishes only new ones. */
  private readonly published = new Set<string>()

  constructor(
    private readonly store: EntityStore,
    private readonly onWrite: WriteListener = () => {},
  ) {}

  /** Verifiers accept the root key from now on; one already published, or tombstoned, is left as it is. */
  async publish(record: RootKeyRecord): Promise<void> {
    // The pointer first (the entities' rule): a reconcile finds every root key ever published.
    await this.store.addToIndex(PUBLISHED_INDEX, record.hash)
    const write = await this.store.writeEntity(
      rootKeyAddress(record.hash),
      record.id,
      'created',
      rootKeyEntityOf(record),
    )
    if (typeof write !== 'string') this.onWrite(write)
  }

  /** Verifiers refuse the root key from now on (within the bound), whatever was published of it, if anything. */
  async tombstone(record: Pick<RootKeyRecord, 'hash' | 'id'>): Promise<void> {
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
   * Publishes every stored root key that has no entity yet — legacy root keys, never published, or one left by a create
   * cut short between its two writes — and turns the bootstrap key off for verifiers if the store has it off. Only ever
   * adds what the store holds (a tombstone stays), so it is safe beside any other write. Answers what it found: how
   * many root keys are stored, and whether the bootstrap key is off.
   */
  async backfill(
    rootKeys: Pick<RootKeyStore, 'listRootKeys' | 'isBootstrapRootKeyDisabled' | 'getRootKeyByHash'>,
  ): Promise<RootKeysFound> {
    const stored = await rootKeys.listRootKeys()
    const live = new Set(stored.map((record) => record.hash))
    for (const record of stored) {
      if (this.published.has(record.hash)) continue
      await this.publish(record)
      this.published.add(record.hash)
    }
    await this.tombstoneRevoked(rootKeys, live)
    const bootstrapDisabled = await rootKeys.isBootstrapRootKeyDisabled()
    if (bootstrapDisabled && !(await this.bootstrapSwitch())?.doc.disabled) await this.disableBootstrap()
    return { stored: stored.length, bootstrapDisabled }
  }

  /**
   * Tombstones every published root key the store no longer has: one revoked or rolled by something that wrote no
   * tombstone (a control plane or CLI that does not publish root keys to verifiers, mid rolling upgrade).
   * A hash is in the index only once the store had it (publish follows the store's create), so a published root key
   * the store lacks now was revoked: it is read again one by one before it is tombstoned (never a race with a create).
   */
  private async tombstoneRevoked(
    rootKeys: Pick<RootKeyStore, 'getRootKeyByHash'>,
    live: ReadonlySet<string>,
  ): Promise<void> {
    let cursor: string | undefined
    do {
      const page = await this.store.listIndex(PUBLISHED_INDEX, { limit: 100, ...(cursor ? { cursor } : {}) })
      for (const hash of page.members) {
        if (live.has(hash)) continue
        const mirrored = await this.store.getEntity<RootKeyEntity>(rootKeyAddress(hash))
        if (!mirrored || livePermissions(mirrored.doc) === undefined) continue
        if (await rootKeys.getRootKeyByHash(hash)) continue
        await this.tombstone({ hash, id: mirrored.doc.id })
      }
      cursor = page.cursor
    } while (cursor !== undefined)
  }
}
