import { randomUUID } from 'node:crypto'
import type { KeyRecord } from '../../../shared/keys/records.js'
import type {
  CounterMove,
  HourCounter,
  UsageCounterStore,
} from '../../../shared/store/usage-counters/usage-counter-store.js'
import { WORKSPACE_ID } from '../../workspace.js'
import type { AnalyticsEngine } from '../engine/analytics-engine.js'
import { KEY_VERIFICATION_ROLLUPS } from '../engine/analytics-tables.js'

/** The rollup the counters go into: the hourly one, whose views feed the daily and monthly ones. */
const HOURLY = KEY_VERIFICATION_ROLLUPS.find((rollup) => rollup.name === 'key_verifications_per_hour_v1')!
/** What the moved rows say they came from, for whoever wonders why they have no minute rows. */
export const COUNTER_SOURCE = 'counters'
const HOUR_MS = 3_600_000

/** The outcomes the counters kept, as the rollups name them. */
const OUTCOMES = [
  ['valid', 'VALID'],
  ['rateLimited', 'RATE_LIMITED'],
  ['usageExceeded', 'USAGE_EXCEEDED'],
] as const

export interface MoveCountersDeps {
  counters: UsageCounterStore
  engine: AnalyticsEngine
  /** The key a counter is of; null: deleted (its counts have no api to be read under, and are dropped). */
  keyOf: (keyId: string) => Promise<KeyRecord | null>
  /**
   * Whether this process still moves them (holds the ingest's lease, renewed by asking): asked before each page, so
   * that two control planes never move the same page. Default: always.
   */
  stillHeld?: () => Promise<boolean>
}

/**
 * Moves the verification counters verifiers kept in the store before analytics into the hourly rollup, a page at a
 * time, and drops each page from the store once the engine has it: then they are read as every other verification
 * is, by api, key and externalId (the key's owner as it is now; no identity id). Answers how many hourly counters
 * were read, or undefined if it stopped because this process no longer holds the ingest.
 *
 * Only the hours before the first verification the engine holds from the verifiers are moved: the verifiers that
 * kept counters recorded analytics rows too from then on, so a later hour's counts are in the rollups already (the
 * hour the first row is in is taken as recorded whole). Counters of deleted keys are dropped.
 *
 * Each page's rows and token are written down in the store before the insert (a CounterMove): a move that dies
 * between the insert and the drop is finished first by the next, with the same rows under the same token, which the
 * engine drops if it has them; the pages the store answers by then need not be the ones it answered before.
 */
export async function moveUsageCounters(deps: MoveCountersDeps): Promise<number | undefined> {
  const stillHeld = deps.stillHeld ?? (async () => true)
  if (!(await stillHeld())) return undefined
  const pending = await deps.counters.pendingMove()
  if (pending !== undefined) await finish(deps, pending)
  const recordedFrom = await firstRecordedHour(deps.engine)
  let moved = 0
  let cursor: string | undefined
  do {
    if (!(await stillHeld())) return undefined
    const page = await deps.counters.readCounters(cursor)
    const before = page.counters.filter((counter) => recordedFrom === undefined || counter.hour < recordedFrom)
    const rows = await rowsOf(deps, before)
    if (rows.length > 0) await finish(deps, { token: `usage-counters:${randomUUID()}`, rows, entries: page.entries })
    else if (page.entries.length > 0) await deps.counters.dropCounters(page.entries)
    moved += page.counters.length
    cursor = page.cursor
  } while (cursor !== undefined)
  return moved
}

/** Writes the move down (again, if it is the pending one), inserts its rows, drops its entries, forgets it. */
async function finish(deps: MoveCountersDeps, move: CounterMove): Promise<void> {
  await deps.counters.beginMove(move)
  await deps.engine.insert(HOURLY.name, move.rows, move.token)
  await deps.counters.dropCounters(move.entries)
  await deps.counters.endMove()
}

/**
 * The start of the hour of the earliest verification the verifiers recorded for analytics that the hourly rollup
 * holds (Unix ms), or undefined when it holds none.
 */
async function firstRecordedHour(engine: AnalyticsEngine): Promise<number | undefined> {
  const [found] = await engine.query(
    `SELECT count() AS n, toUnixTimestamp(min(time)) AS first FROM \`${HOURLY.name}\` WHERE source != {counters:String}`,
    { counters: COUNTER_SOURCE },
  )
  if (found === undefined || Number(found.n) === 0) return undefined
  return Math.floor((Number(found.first) * 1_000) / HOUR_MS) * HOUR_MS
}

async function rowsOf(deps: MoveCountersDeps, counters: readonly HourCounter[]): Promise<Record<string, unknown>[]> {
  const keys = new Map<string, KeyRecord | null>()
  for (const keyId of new Set(counters.map((counter) => counter.keyId))) keys.set(keyId, await deps.keyOf(keyId))
  const rows: Record<string, unknown>[] = []
  for (const counter of [...counters].sort((a, b) => a.keyId.localeCompare(b.keyId) || a.hour - b.hour)) {
    const key = keys.get(counter.keyId)
    if (!key) continue
    for (const [field, outcome] of OUTCOMES) {
      if (counter[field] <= 0) continue
      rows.push({
        time: Math.floor(counter.hour / 1_000),
        workspace_id: WORKSPACE_ID,
        key_space_id: key.apiId,
        identity_id: '',
        external_id: key.ownerId ?? '',
        key_id: key.id,
        outcome,
        tags: [],
        source: COUNTER_SOURCE,
        region: '',
        count: counter[field],
        spent_credits: 0,
      })
    }
  }
  return rows
}
