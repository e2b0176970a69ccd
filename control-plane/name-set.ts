import { createHash } from 'node:crypto'
import bs58 from 'bs58'

/** Permission and role names as stored: unique, sorted; absent when empty. */
export function nameSet(names: readonly string[] | undefined): string[] | undefined {
  if (!names || names.length === 0) return undefined
  return [...new Set(names)].sort()
}

/**
 * Keygate has no separate permission or role records: a name is its identity. The id Unkey's API returns
 * is derived from the name, so the same name always has the same id.
 */
export function nameId(kind: 'perm' | 'role', name: string): string {
  return `${kind}_${bs58.encode(createHash('sha256').update(name).digest().subarray(0, 16))}`
}
