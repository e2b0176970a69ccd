import type { Store } from '../../shared/store/store.js'

type PartName =
  | 'keys'
  | 'entities'
  | 'rootKeys'
  | 'counters'
  | 'usageCounters'
  | 'audit'
  | 'changes'
  | 'snapshots'
  | 'webhooks'
  | 'leakReports'
  | 'portalSessions'

/** Replacements for methods of the store's parts, e.g. `{ changes: { readRevisions: async () => … } }`. */
export type PartOverrides = { [P in PartName]?: Partial<Store[P]> }

/**
 * `store` with some methods of its parts replaced (a fault, a hold, a count): every other method, and every other part,
 * is the store's own, so what the test does not replace still reaches the store.
 */
export function overriding(store: Store, overrides: PartOverrides): Store {
  const parts: PropertyDescriptorMap = {}
  for (const [name, methods] of Object.entries(overrides) as [PartName, object][]) {
    parts[name] = { value: Object.assign(Object.create(store[name]) as object, methods) }
  }
  return Object.create(store, parts) as Store
}
