import { createHash } from 'node:crypto'
import type { KeyRecord } from '../../../shared/keys/records.js'
import type { HourCounter, UsageCounterStore } from '../../../shared/store/usage-counters/usage-counter-store.js'
import { WORKSPACE_ID } from '../../workspace.js'
import type { AnalyticsEngine } from '../engine/analytics-engine.js'
import { KEY_VERIFICATION_ROLLUPS } from '../engine/analytics-tables.js'

/** The rollup the counters go into: the hourly one, whose views feed the daily and monthly ones. */
const HOURLY = KEY_VERIFICATION_ROLLUPS.find((rollup) => rollup.name === 'key_verifications_per_hour_v1')!
/** What the moved rows say they came from, for whoever wonders why they have no minute rows. */
export const COUNTER_SOURCE = 'counters'

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
}

/**
 * Moves the verification counters verifiers kept in the store before analytics into the hourly rollup, a page at a
 * time, and drops each page from the store once the engine has it: then they are read as every other verification
 * is, by api, key and externalId (the key's owner as it is now; no identity id). Answers how many hourly counters
 * were moved.
 *
 * A page is inserted under a token made of its rows, so a page moved again after its insert but before its drop (a
 * crash in between) is dropped by the engine rather than counted twice, as long as the store answers the same page
 * again (a store whose entries are unchanged does). Counters of deleted keys are dropped.
 */
export async function moveUsageCounters(deps: MoveCountersDeps): Promise<number> {
  let moved = 0
  let cursor: string | undefined
  do {
    const page = await deps.counters.readCounters(cursor)
    const rows = await rowsOf(deps, page.counters)
    if (rows.length > 0) {
      const token = createHash('sha256').update(JSON.stringify(rows)).digest('base64url')
      await deps.engine.insert(HOURLY.name, rows, `usage-counters:${token}`)
    }
    if (page.entries.length > 0) await deps.counters.dropCounters(page.entries)
    moved += page.counters.length
    cursor = page.cursor
  } while (cursor !== undefined)
  return moved
}

async function rowsOf(deps: MoveCountersDeps, counters: readonly HourCounter[]): Promise<object[]> {
  const keys = new Map<string, KeyRecord | null>()
  for (const keyId of new Set(counters.map((counter) => counter.keyId))) keys.set(keyId, await deps.keyOf(keyId))
  const rows: object[] = []
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
