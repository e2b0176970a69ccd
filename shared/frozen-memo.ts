/**
 * A frozen value with a place for what its consumers derive from it. A verdict answered again and again (memoised on
 * its cached key: key-verifier.ts) is frozen so that what is made of it can be made once — its serialised JSON
 * (fast-route.ts), a gateway's answer (authorize-route.ts) — and kept with it.
 *
 * Kept on the value rather than in a WeakMap keyed by it: on the cache-miss path (a new verdict per request), a
 * long-lived WeakMap's young values (the serialised answer) are promoted to the old generation after their key has
 * gone; kept here, they die with the verdict in the young generation.
 */
const MEMO = Symbol('what is derived from this frozen value')

/** Each consumer keeps its own entry, under a symbol of its own. */
export type FrozenMemo = Record<symbol, unknown>

/** `value`, frozen, with an empty memo (not enumerable: no serialiser, spread or JSON.stringify sees it). */
export function frozenWithMemo<T extends object>(value: T): Readonly<T> {
  Object.defineProperty(value, MEMO, { value: {} })
  return Object.freeze(value)
}

/** The memo of a value frozen by `frozenWithMemo`; undefined for any other value. */
export function memoOf(value: object): FrozenMemo | undefined {
  return (value as { [MEMO]?: FrozenMemo })[MEMO]
}
