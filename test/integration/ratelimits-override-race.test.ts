import { afterEach, describe, expect, it } from 'vitest'
import { RatelimitNamespaces } from '../../control-plane/ratelimits/ratelimit-namespaces.js'
import { RatelimitOverrides } from '../../control-plane/ratelimits/ratelimit-overrides.js'
import { namespaceAddress, overrideAddress, type NamespaceRecord } from '../../shared/ratelimits/ratelimit-namespace.js'
import type { EntityStore } from '../../shared/store/entities/entity-store.js'
import { openBackend, type Backend } from '../support/apps.js'
import { overriding } from '../support/store-overrides.js'

/**
 * A wildcard override lives twice: as its own record (listed, read and deleted by identifier) and in its namespace's
 * record (what verifiers match against). A set and a delete of one pattern at once must never leave it in the
 * namespace without its record: applied by every verifier, yet listed nowhere and refused by deleteOverride (404).
 */
describe('setOverride and deleteOverride of one wildcard at once', () => {
  const PATTERN = 'user_*'
  const RULE = { limit: 1, duration: 60_000, async: false }
  const backends: Backend[] = []
  afterEach(async () => {
    for (const backend of backends.splice(0)) await backend.close()
  })

  /** Overrides on a store that runs `during` once, just before the `nth` call `when` picks out. */
  async function setUp(when: (call: { method: string; address: string; kind?: string }) => boolean) {
    const backend = await openBackend()
    backends.push(backend)
    let during: (() => Promise<unknown>) | undefined
    const hooked =
      (method: 'getEntity' | 'writeEntity') =>
      async (address: string, ...rest: unknown[]) => {
        const run = during
        if (run && when({ method, address, kind: rest[1] as string | undefined })) {
          during = undefined
          await run()
        }
        return (backend.store.entities[method] as (...args: unknown[]) => Promise<unknown>)(address, ...rest)
      }
    const store = overriding(backend.store, {
      entities: {
        getEntity: hooked('getEntity') as EntityStore['getEntity'],
        writeEntity: hooked('writeEntity') as EntityStore['writeEntity'],
      },
    })
    const clock = { now: () => Date.now() }
    const namespaces = new RatelimitNamespaces(store.entities, clock, () => {})
    const overrides = new RatelimitOverrides(store.entities, namespaces, clock, () => {})
    const { namespace } = await namespaces.create('race')
    const applied = async () =>
      (await backend.store.entities.getEntity<NamespaceRecord>(namespaceAddress('race')))!.doc.wildcards.map(
        (w) => w.identifier,
      )
    return { overrides, namespace, applied, interleave: (run: () => Promise<unknown>) => (during = run) }
  }

  it('a delete that runs whole between the set’s two writes', async () => {
    let namespaceReads = 0
    const { overrides, namespace, applied, interleave } = await setUp(
      // The set reads the namespace twice: to check it has room, then to add the pattern to it.
      ({ method, address }) => method === 'getEntity' && address === namespaceAddress('race') && ++namespaceReads === 2,
    )
    interleave(async () => expect(await overrides.delete(namespace, PATTERN)).not.toBeNull())
    await overrides.set(namespace, PATTERN, RULE)
    expect(await overrides.get(namespace, PATTERN)).toBeNull()
    expect(await applied()).toEqual([])
  })

  it('a set that runs whole between the delete’s two writes', async () => {
    const { overrides, namespace, applied, interleave } = await setUp(
      ({ method, address, kind }) =>
        method === 'writeEntity' && address === overrideAddress(namespace.id, PATTERN) && kind === 'deleted',
    )
    await overrides.set(namespace, PATTERN, RULE)
    interleave(() => overrides.set(namespace, PATTERN, { ...RULE, limit: 2 }))
    expect(await overrides.delete(namespace, PATTERN)).not.toBeNull()
    expect(await overrides.get(namespace, PATTERN)).toBeNull()
    expect(await applied()).toEqual([])
  })
})
