import { createHash } from 'node:crypto'
import { entityAddress } from '../entity.js'

/** The settings an override gives an identifier in place of the ones the request sends. */
export interface OverrideRule {
  limit: number
  duration: number
  async: boolean
}

/** An override of one namespace: for one identifier, or for every identifier a `*` pattern matches. */
export interface OverrideRecord extends OverrideRule {
  id: string
  namespaceId: string
  identifier: string
  createdAt: number
  updatedAt?: number
}

/** A wildcard override as its namespace carries it: what the verifier matches identifiers against. */
export type WildcardRule = Pick<OverrideRecord, 'id' | 'identifier'> & OverrideRule

/**
 * A rate-limit namespace, found by its name (unique, never renamed nor deleted in v1). It carries its wildcard
 * overrides (in the order first set), so that a verifier learns every one of them, and every change to them, from
 * one record; exact overrides are records of their own, one per identifier, so that a namespace can hold any number.
 */
export interface NamespaceRecord {
  id: string
  name: string
  createdAt: number
  wildcards: WildcardRule[]
}

/** Names and identifiers are any string a client sends: addresses hold their digest, of fixed length and alphabet. */
export function digestOf(text: string): string {
  return createHash('sha256').update(text).digest('base64url')
}

export const namespaceAddress = (name: string) => entityAddress('namespace', digestOf(name))

/**
 * The scope of the namespace id → name pointers (a namespace is stored under its name): written before the record,
 * never deciding alone. A pointer never changes: names are never renamed nor released once their record is
 * written, and one left by a create that lost a race names a record with another id.
 */
export const NAMESPACE_ID_SCOPE = 'rlns-id'

/** Whether a text has the shape of a namespace id (`rlns_…`): v2 names a namespace by its name or its id. */
export const isNamespaceId = (text: string) => /^rlns_[1-9A-HJ-NP-Za-km-z]{22}$/.test(text)

export const overrideAddress = (namespaceId: string, identifier: string) =>
  entityAddress('override', `${namespaceId}:${digestOf(identifier)}`)

/** Whether an override's identifier is a pattern (Unkey's rule: any `*` in it). */
export const isWildcard = (identifier: string) => identifier.includes('*')

/**
 * Whether `identifier` matches the pattern, `*` standing for any run of characters (none included) and every
 * other character for itself. Matched piece by piece rather than by a regular expression built from client input.
 */
export function wildcardMatches(pattern: string, identifier: string): boolean {
  const pieces = pattern.split('*')
  if (pieces.length === 1) return pattern === identifier
  const first = pieces[0]!
  const last = pieces[pieces.length - 1]!
  if (identifier.length < first.length + last.length) return false
  if (!identifier.startsWith(first) || !identifier.endsWith(last)) return false
  let at = first.length
  const end = identifier.length - last.length
  for (const piece of pieces.slice(1, -1)) {
    const found = identifier.indexOf(piece, at)
    if (found < 0 || found + piece.length > end) return false
    at = found + piece.length
  }
  return true
}

/**
 * The override that applies: the identifier's own, else the first-set wildcard that matches it, else none. Its id
 * is what v2 answers as `overrideId`.
 */
export function overrideFor(
  identifier: string,
  exact: OverrideRecord | null,
  namespace: NamespaceRecord | null,
): WildcardRule | undefined {
  if (exact) return exact
  return namespace?.wildcards.find((rule) => wildcardMatches(rule.identifier, identifier))
}
