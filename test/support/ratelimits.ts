import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { namespaceAddress, type NamespaceRecord } from '../../shared/ratelimits/ratelimit-namespace.js'
import type { Backend } from './apps.js'
import { JSON_ONLY } from './both-stores.js'

/** Headers of a stored root key holding exactly `permissions`. */
export async function rootKeyWith(backend: Backend, permissions: string[]): Promise<Record<string, string>> {
  const { key, hash } = generateRootKey()
  await backend.store.rootKeys.createRootKey({ id: newId('root'), hash, permissions, createdAt: Date.now() })
  return { ...JSON_ONLY, authorization: `Bearer ${key}` }
}

/** The namespace record named so, read from the store (v1 has no call that shows a namespace). */
export async function namespaceOf(backend: Backend, name: string): Promise<NamespaceRecord | null> {
  return (await backend.store.entities.getEntity<NamespaceRecord>(namespaceAddress(name)))?.doc ?? null
}
