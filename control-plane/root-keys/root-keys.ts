import type { Clock } from '../../shared/clock.js'
import { ApiError, notFound } from '../../shared/errors/errors.js'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import type { RootKeyRecord } from '../../shared/keys/records.js'
import type { ManagementStore } from '../../shared/store/management-store.js'
import type { AuditActor, AuditLog } from '../audit/audit-log.js'
import type { WriteListener } from '../write-listener.js'
import { BOOTSTRAP_ID } from './root-key-auth.js'
import { RootKeyEntities, type RootKeysFound } from './root-key-entities.js'

/**
 * A root key as the API, the command line and the audit log show it: never its hash, never the key. (A type, not
 * an interface, so that the audit log takes it as a plain object; a RootKeyRecord it would refuse.)
 */
export type RootKeyView = {
  id: string
  name?: string
  start?: string
  permissions: string[]
  createdAt: number
  lastUsedAt?: number
}

export function rootKeyView(record: RootKeyRecord): RootKeyView {
  const { id, name, start, permissions, createdAt, lastUsedAt } = record
  return {
    id,
    ...(name === undefined ? {} : { name }),
    ...(start === undefined ? {} : { start }),
    permissions,
    createdAt,
    ...(lastUsedAt === undefined ? {} : { lastUsedAt }),
  }
}

/** A root key just made: the key itself is in the answer once, and nowhere else. */
export interface NewRootKey {
  record: RootKeyRecord
  key: string
}

export interface RootKeysDeps {
  /** The root keys, and the entities that mirror them for verifiers (root-key-entities.ts). */
  store: Pick<ManagementStore, 'rootKeys' | 'entities'>
  audit: AuditLog
  clock: Clock
  /** Told of each entity write (a control plane's own verifier, for read-your-writes); the command line has none. */
  onWrite?: WriteListener
}

/**
 * The root-key lifecycle, for the rootKeys.* operations and the `keygate root-key` commands alike: each write is
 * audited under its actor, and mirrored for verifiers (v2's verifyKey takes a root key) in the order
 * root-key-entities.ts gives. Who may do what is the caller's to check (an operation checks its root key's permissions;
 * the command line can reach Redis, so it may do anything).
 */
export class RootKeys {
  private readonly entities: RootKeyEntities

  constructor(private readonly deps: RootKeysDeps) {
    this.entities = new RootKeyEntities(deps.store.entities, deps.onWrite)
  }

  async create(actor: AuditActor, input: { name?: string | undefined; permissions: string[] }): Promise<NewRootKey> {
    const now = this.deps.clock.now()
    const { key, hash, start } = generateRootKey()
    const record: RootKeyRecord = {
      id: newId('root', now),
      hash,
      start,
      ...(input.name === undefined ? {} : { name: input.name }),
      permissions: [...new Set(input.permissions)].sort(),
      createdAt: now,
    }
    // Two random 32-byte keys (and two random ids) never collide: this is a bug, not a case to handle.
    if (!(await this.deps.store.rootKeys.createRootKey(record)))
      throw new Error('a new root key collided with a stored one')
    // Stored first: a crash before this leaves a root key verifiers refuse (and nobody holds: it was never answered).
    await this.entities.publish(record)
    await this.deps.audit.append(actor, 'rootKeys.createRootKey', { keyId: record.id, after: rootKeyView(record) })
    return { record, key }
  }

  list(): Promise<RootKeyRecord[]> {
    return this.deps.store.rootKeys.listRootKeys()
  }

  bootstrapDisabled(): Promise<boolean> {
    return this.deps.store.rootKeys.isBootstrapRootKeyDisabled()
  }

  /** The stored root key `id`, or the contract's 404 (which says what the bootstrap key is, if that was asked). */
  async get(id: string): Promise<RootKeyRecord> {
    const record = await this.deps.store.rootKeys.getRootKeyById(id)
    if (record) return record
    if (id === BOOTSTRAP_ID)
      throw notFound(
        'rootKey',
        `${BOOTSTRAP_ID} is KEYGATE_ROOT_KEY, which is not stored: turn it off with \`keygate root-key bootstrap disable\``,
      )
    throw notFound('rootKey', `root key ${id} not found`)
  }

  /**
   * Revokes root key `id`: refused from the moment this returns on every control plane, and by every verifier within
   * the revocation bound.
   */
  async revoke(actor: AuditActor, id: string): Promise<RootKeyRecord> {
    const record = await this.deps.store.rootKeys.getRootKeyById(id)
    if (!record) throw notFound('rootKey', `root key ${id} not found`)
    // Verifiers first: a crash between the two writes leaves a root key they refuse and the control plane accepts.
    await this.entities.tombstone(record)
    const revoked = await this.deps.store.rootKeys.revokeRootKey(id)
    if (!revoked) throw notFound('rootKey', `root key ${id} not found`)
    await this.deps.audit.append(actor, 'rootKeys.revokeRootKey', { keyId: id, before: rootKeyView(revoked) })
    return revoked
  }

  /** A new root key with the same name and permissions, and root key `id` revoked, in one step. */
  async roll(actor: AuditActor, id: string): Promise<NewRootKey & { revoked: RootKeyRecord }> {
    const old = await this.get(id)
    const now = this.deps.clock.now()
    const { key, hash, start } = generateRootKey()
    const { lastUsedAt: _lastUsedAt, ...kept } = old
    const record: RootKeyRecord = { ...kept, id: newId('root', now), hash, start, rolledFrom: id, createdAt: now }
    // As a revoke, then a create: the old one is refused by verifiers before the store drops it, the new one
    // accepted by them only once it is stored.
    await this.entities.tombstone(old)
    const revoked = await this.deps.store.rootKeys.rollRootKey(id, record)
    if (!revoked) throw notFound('rootKey', `root key ${id} not found`)
    await this.entities.publish(record)
    await this.deps.audit.append(actor, 'rootKeys.rollRootKey', {
      keyId: id,
      before: rootKeyView(revoked),
      after: rootKeyView(record),
    })
    return { record, key, revoked }
  }

  /**
   * Turns the bootstrap root key (KEYGATE_ROOT_KEY) off or back on for every control plane on this store, whatever
   * their environment says. Off only once a stored root key with `*` exists, so that the API keeps an admin.
   */
  async setBootstrap(actor: AuditActor, enabled: boolean): Promise<void> {
    if (!enabled && !(await this.list()).some((record) => record.permissions.includes('*')))
      throw new ApiError(
        'PRECONDITION_FAILED',
        "no stored root key has '*': create one first (keygate root-key create --permissions '*'), then turn the bootstrap root key off",
      )
    // Verifiers refuse it before the control planes do, and accept it again only after them.
    if (enabled) {
      const seen = await this.entities.bootstrapSwitch()
      await this.deps.store.rootKeys.setBootstrapRootKeyDisabled(false)
      await this.entities.enableBootstrap(seen)
    } else {
      await this.entities.disableBootstrap()
      await this.deps.store.rootKeys.setBootstrapRootKeyDisabled(true)
    }
    const action = enabled ? 'rootKeys.enableBootstrapRootKey' : 'rootKeys.disableBootstrapRootKey'
    await this.deps.audit.append(actor, action, { keyId: BOOTSTRAP_ID, after: { enabled } })
  }

  /**
   * Publishes to verifiers what the store holds and they have not been given (legacy root keys, or one left by a create
   * cut short): run by every control plane at start. Safe beside any other write (it only adds).
   */
  async backfill(): Promise<RootKeysFound> {
    // Legacy root keys moved first (once per store): the reconcile's lists, every second, then read one place only.
    await this.deps.store.rootKeys.moveLegacyRootKeys()
    return this.entities.backfill(this.deps.store.rootKeys)
  }
}
