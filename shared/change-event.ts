/**
 * A change that can alter a verdict. Small, ordered by `rev` within the shard of `hash`, never a secret.
 * Stored in the shard's capped log (the repair path) and published (the low-latency path).
 */
export type ChangeKind = 'created' | 'updated' | 'deleted'

export interface ChangeEvent {
  /** Format version of the event, so that old and new processes can run side by side. */
  v: 1
  shard: number
  /**
   * Identity of the shard's revision sequence. It changes only if Redis lost the shard's data (restart
   * without persistence, flush, failover to an empty replica): revisions of another epoch do not compare.
   */
  epoch: string
  rev: number
  kind: ChangeKind
  keyId: string
  hash: string
  apiId: string
  /**
   * When it was published, in unix microseconds by the store's clock: on live events only (the log's
   * replayed changes carry none). Verifiers turn it into keygate_change_propagation_seconds.
   */
  at?: number
  /**
   * On an update as the log keeps it (never published): the record's fields the write changed (KeyRecord names),
   * read by the webhooks' deriver to say what changed.
   */
  fields?: string[]
}

const KINDS: ReadonlySet<string> = new Set(['created', 'updated', 'deleted'])

/** Parse a published message; undefined for anything that is not a well-formed event (never throws). */
export function parseChangeEvent(text: string): ChangeEvent | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const e = value as Record<string, unknown>
  if (
    e.v !== 1 ||
    !Number.isSafeInteger(e.shard) ||
    !Number.isSafeInteger(e.rev) ||
    typeof e.epoch !== 'string' ||
    typeof e.kind !== 'string' ||
    !KINDS.has(e.kind) ||
    typeof e.keyId !== 'string' ||
    typeof e.hash !== 'string' ||
    typeof e.apiId !== 'string'
  )
    return undefined
  // A malformed time is dropped, not the event: the change itself must still be applied.
  if (e.at !== undefined && !Number.isFinite(e.at)) delete e.at
  return e as unknown as ChangeEvent
}

/** How many changes each shard's log keeps (approximately, on Redis): the window a verifier can replay. */
export const CHANGE_LOG_MAX_LEN = 10_000
