import type { Clock } from '../../shared/clock.js'
import { ApiError, notFound, WriteConflictError } from '../../shared/errors/errors.js'
import { newId } from '../../shared/ids.js'
import {
  isNamespaceId,
  NAMESPACE_ID_SCOPE,
  namespaceAddress,
  type NamespaceRecord,
  type WildcardRule,
} from '../../shared/ratelimits/ratelimit-namespace.js'
import type { EntityStore } from '../../shared/store/entities/entity-store.js'
import { pageThroughIndex, type PageOptions, type RecordPage } from '../index-page.js'
import type { WriteListener } from '../write-listener.js'

/**
 * The index of every namespace by id (creation order), for ratelimits.listNamespaces: a pointer written before the
 * record (a crash leaves an entry the listing skips). Namespaces stored without an entry (the legacy layout) are not
 * listed.
 */
export const NAMESPACES_INDEX = 'ratelimit-namespaces'

// A compare-and-set update is retried this many times against concurrent writers before a 409.
const UPDATE_ATTEMPTS = 5
/** Wildcard overrides a namespace holds: every ratelimits.limit call on a verifier may try each of them. */
export const MAX_WILDCARDS = 256

/**
 * How a call names a namespace: by its id, by its name, or by a text that is either (the name first: a name may look
 * like an id).
 */
export type NamespaceRef = { id: string } | { name: string } | { nameOrId: string }

/**
 * Rate-limit namespaces (shared/ratelimits/ratelimit-namespace.ts): created on first use, found by name (their address)
 * or by id (through a pointer), and the wildcard overrides each carries. Two processes creating one name at once make
 * one record: the loser reads the winner's.
 */
export class RatelimitNamespaces {
  constructor(
    private readonly store: EntityStore,
    private readonly clock: Clock,
    private readonly onWrite: WriteListener,
  ) {}

  async byName(name: string): Promise<NamespaceRecord | null> {
    return (await this.store.getEntity<NamespaceRecord>(namespaceAddress(name)))?.doc ?? null
  }

  async byId(id: string): Promise<NamespaceRecord | null> {
    const name = await this.store.readName(NAMESPACE_ID_SCOPE, id)
    if (name === null) return null
    const namespace = await this.byName(name)
    // A pointer left by a create that lost a race (or crashed) names a record with another id, or none.
    return namespace?.id === id ? namespace : null
  }

  /** The namespace named so, else the one with this id (v2's `namespace` is either), or null. */
  async byNameOrId(text: string): Promise<NamespaceRecord | null> {
    return (await this.byName(text)) ?? (isNamespaceId(text) ? await this.byId(text) : null)
  }

  /** The namespace a call names, or null. */
  find(ref: NamespaceRef): Promise<NamespaceRecord | null> {
    if ('id' in ref) return this.byId(ref.id)
    return 'name' in ref ? this.byName(ref.name) : this.byNameOrId(ref.nameOrId)
  }

  /** Creates the namespace, or finds the one a concurrent call just created; `created` says which. */
  async create(name: string): Promise<{ namespace: NamespaceRecord; created: boolean }> {
    const now = this.clock.now()
    const record: NamespaceRecord = { id: newId('rlns', now), name, createdAt: now, wildcards: [] }
    await this.store.claimName(NAMESPACE_ID_SCOPE, record.id, name)
    await this.store.addToIndex(NAMESPACES_INDEX, record.id)
    const write = await this.store.writeEntity(namespaceAddress(name), record.id, 'created', record)
    if (write === 'exists') {
      await this.store.removeFromIndex(NAMESPACES_INDEX, record.id)
      await this.store.releaseName(NAMESPACE_ID_SCOPE, record.id, name)
      const winner = await this.byName(name)
      if (!winner) throw new WriteConflictError()
      return { namespace: winner, created: false }
    }
    if (typeof write === 'string') throw new Error(`unexpected reply to create: ${write}`)
    this.onWrite(write)
    return { namespace: record, created: true }
  }

  /** A page of the namespaces, oldest first. */
  list(page: PageOptions): Promise<RecordPage<NamespaceRecord>> {
    return pageThroughIndex(this.store, NAMESPACES_INDEX, page, (id) => this.byId(id))
  }

  /** 412 when the namespace holds MAX_WILDCARDS wildcard overrides already. */
  async requireWildcardRoom(namespaceName: string): Promise<void> {
    const held = (await this.byName(namespaceName))?.wildcards.length ?? 0
    if (held >= MAX_WILDCARDS) throw full()
  }

  /** Puts (or replaces, by identifier) a wildcard override in its namespace, oldest first; 412 past MAX_WILDCARDS. */
  setWildcard(namespaceName: string, rule: WildcardRule): Promise<void> {
    return this.updateWildcards(namespaceName, (rules) => {
      // Changed in place, or added last: the list stays in the order the patterns were first set.
      if (rules.some((held) => held.identifier === rule.identifier))
        return rules.map((held) => (held.identifier === rule.identifier ? rule : held))
      if (rules.length >= MAX_WILDCARDS) throw full()
      return [...rules, rule]
    })
  }

  removeWildcard(namespaceName: string, identifier: string): Promise<void> {
    return this.updateWildcards(namespaceName, (rules) =>
      rules.some((held) => held.identifier === identifier)
        ? rules.filter((held) => held.identifier !== identifier)
        : rules,
    )
  }

  private async updateWildcards(name: string, change: (rules: WildcardRule[]) => WildcardRule[]): Promise<void> {
    const address = namespaceAddress(name)
    for (let attempt = 1; ; attempt++) {
      const current = await this.store.getEntity<NamespaceRecord>(address)
      if (!current) throw notFound('namespace', `namespace ${name} not found`)
      const wildcards = change(current.doc.wildcards)
      // Nothing to change: no write, so no event that every verifier would have to handle.
      if (wildcards === current.doc.wildcards) return
      const write = await this.store.writeEntity(
        address,
        current.doc.id,
        'updated',
        { ...current.doc, wildcards },
        current.rev,
      )
      if (typeof write !== 'string') {
        this.onWrite(write)
        return
      }
      if (attempt === UPDATE_ATTEMPTS) throw new WriteConflictError()
    }
  }
}

const full = () =>
  new ApiError(
    'PRECONDITION_FAILED',
    `the namespace holds ${MAX_WILDCARDS} wildcard overrides, the most it may: delete one first`,
  )
