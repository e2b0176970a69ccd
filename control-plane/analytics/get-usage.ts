import { DEFAULT_BILLABLE_OUTCOMES } from '../../shared/api-settings.js'
import { invalid, notFound } from '../../shared/errors/errors.js'
import type { VerdictCode } from '../../shared/verification/verification.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requireOneOf, requireOneOfOnKey } from '../root-keys/root-key-auth.js'
import { scopeOf } from './query/query-scope.js'
import { VERIFICATIONS } from './query/query-rules.js'
import {
  nextSlice,
  reportEngine,
  sliceStart,
  usageReport,
  type OutcomeCounts,
  type Slice,
  type UsageRow,
} from './usage-report.js'
import { addVerifications, noUsage, OUTCOME_FIELD, type Usage } from './usage-sum.js'

/** Whose usage: an identity's (over the apis the root key may read), one key's, or some apis'. */
export interface GetUsageInput {
  /** An identity, by its externalId: its verifications across its keys, deleted ones included. */
  externalId?: string | undefined
  /** One key. */
  keyId?: string | undefined
  /** With externalId: only these apis. Alone: these apis' usage, every key's. */
  apiIds: string[]
  start: number
  /** Exclusive; default: now. */
  end?: number | undefined
  granularity: Slice
}

export interface UsagePeriod extends Usage {
  /** The period's start (inclusive) and end (exclusive), Unix ms, UTC. */
  start: number
  end: number
}

export interface UsageSummary {
  granularity: Slice
  /** The apis summed over: named ones, or those the root key may read (`*`: every api). */
  apiIds: string[] | '*'
  /** Every period from the one holding start to the last one starting before end, oldest first, empty ones too. */
  periods: UsagePeriod[]
  total: Usage
}

/** Whose rows a summary reads. */
interface Reach {
  apiIds: string[] | 'all'
  keyIds?: string[]
  externalId?: string
}

/**
 * A usage summary for billing (Keygate's): an identity's, a key's or some apis' verifications by outcome per hour, day
 * or month (UTC), with what is billable and the credits spent, from the analytics engine's rollups. Every read needs
 * `read_analytics` on the apis it covers: an identity's usage spans only the apis the root key may read (or those
 * named, each of which it must). In order: the input (400), the key or apis (404) and the root key's rights (403),
 * then analytics on this control plane (412).
 */
export async function getUsage(deps: ControlPlaneDeps, caller: Caller, input: GetUsageInput): Promise<UsageSummary> {
  const now = deps.clock.now()
  const end = input.end ?? now
  if (input.start >= end) throw invalid('start', 'must be before end')
  const reach = await reachOf(deps, caller, input)
  // The report reads through the period holding its end: the one holding the last millisecond before `end`, so that
  // a range ending on a period's start (one invoice's end, the next one's start) leaves that period to the next.
  const rows = await usageReport(
    reportEngine(deps.analytics),
    { ...reach, start: input.start, end: end - 1, slice: input.granularity, byApi: true },
    now,
  )
  const billed = await billableOutcomes(deps, rows)
  const periods = new Map<number, UsagePeriod>()
  for (let t = sliceStart(input.granularity, input.start); t < end; t = nextSlice(input.granularity, t))
    periods.set(t, { start: t, end: nextSlice(input.granularity, t), ...noUsage() })
  const total = noUsage()
  for (const row of rows) {
    const period = periods.get(row.time!)
    if (period === undefined) continue
    for (const usage of [period, total]) add(usage, row, billed.get(row.apiId!)!)
  }
  return {
    granularity: input.granularity,
    apiIds: reach.apiIds === 'all' ? '*' : reach.apiIds,
    periods: [...periods.values()],
    total,
  }
}

const MAX_NAMED_APIS = 100

async function reachOf(deps: ControlPlaneDeps, caller: Caller, input: GetUsageInput): Promise<Reach> {
  const { principal } = caller
  const apiIds = [...new Set(input.apiIds)]
  if (apiIds.length > MAX_NAMED_APIS) throw invalid('apiId', `at most ${MAX_NAMED_APIS} apis per request`)
  if (input.keyId !== undefined) {
    if (input.externalId !== undefined || apiIds.length > 0)
      throw invalid('keyId', 'names the whole subject: leave externalId and apiId out')
    const key = await deps.store.keys.getKeyById(input.keyId)
    if (!key) throw notFound('key', `key ${input.keyId} not found`)
    requireOneOfOnKey(principal, key, ['read_analytics'])
    return { apiIds: [key.apiId], keyIds: [key.id] }
  }
  if (input.externalId === undefined && apiIds.length === 0)
    throw invalid('externalId', 'name whose usage: an externalId, a keyId or apis')
  for (const apiId of apiIds) {
    if (!(await deps.store.keys.getApi(apiId))) throw notFound('api', `api ${apiId} not found`)
    requireOneOf(principal, apiId, ['read_analytics'])
  }
  if (input.externalId === undefined) return { apiIds }
  if (apiIds.length > 0) return { apiIds, externalId: input.externalId }
  const scope = await scopeOf(deps, principal, VERIFICATIONS)
  return { apiIds: scope.kind === 'all' ? 'all' : scope.ids, externalId: input.externalId }
}

/** The outcomes each api of `rows` bills, as its settings say now. */
async function billableOutcomes(deps: ControlPlaneDeps, rows: UsageRow[]): Promise<Map<string, ReadonlySet<string>>> {
  const apiIds = [...new Set(rows.map((row) => row.apiId!))]
  const settings = await Promise.all(apiIds.map((apiId) => deps.apiSettings.of(apiId)))
  return new Map(apiIds.map((apiId, i) => [apiId, new Set(settings[i]!.billableOutcomes ?? DEFAULT_BILLABLE_OUTCOMES)]))
}

/** Adds a report's row (one api's verifications of one period) to `usage`. */
function add(usage: Usage, row: UsageRow, billed: ReadonlySet<string>): void {
  for (const [code, field] of Object.entries(OUTCOME_FIELD) as [VerdictCode, keyof OutcomeCounts][])
    addVerifications(usage, code, row[field], 0, billed)
  usage.spentCredits += row.spentCredits
}
