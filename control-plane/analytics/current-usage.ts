import { DEFAULT_BILLABLE_OUTCOMES, type ApiSettings } from '../../shared/api-settings.js'
import {
  usagePeriodAt,
  usageSubjectMember,
  type UsageMeasure,
  type UsagePeriod,
  type UsageSubject,
} from '../../shared/usage-threshold.js'
import type { AnalyticsEngine } from './engine/analytics-engine.js'
import { stringListParam } from './string-list-param.js'
import { OUTCOME_FIELD } from './usage-sum.js'

/** A subject's usage in the current UTC day and month, by what usage thresholds count. */
export type CurrentUsage = Record<UsagePeriod, Record<UsageMeasure, number>>

/** A usage read is one of the control plane's own: bounded as a report is. */
const READ_SETTINGS = "max_execution_time = 30, max_threads = 2, result_overflow_mode = 'throw'"

const noUsage = (): CurrentUsage => ({ day: { billable: 0, credits: 0 }, month: { billable: 0, credits: 0 } })

/**
 * Each subject's usage in the UTC day and month holding `now`, by index member (usageSubjectMember), every subject
 * asked for answered (zeros when it has none): an identity's over every api, a key's in its api; billable
 * verifications by each one's api's billableOutcomes, credits whatever the outcome. One read of the daily rollup per
 * kind of subject: what usage thresholds are judged by (usage alerts, the portal).
 */
export async function currentUsage(
  engine: AnalyticsEngine,
  apiSettings: { of(apiId: string): Promise<ApiSettings> },
  subjects: readonly UsageSubject[],
  now: number,
): Promise<Map<string, CurrentUsage>> {
  const usage = new Map(subjects.map((subject) => [usageSubjectMember(subject), noUsage()]))
  const identities = subjects.flatMap((subject) => ('identity' in subject ? [subject.identity] : []))
  const keys = subjects.flatMap((subject) => ('keyId' in subject ? [subject.keyId] : []))
  const billed = new Map<string, ReadonlySet<string>>()
  for (const [column, ids, memberOf] of [
    ['external_id', identities, (id: string) => usageSubjectMember({ identity: id })],
    ['key_id', keys, (id: string) => usageSubjectMember({ keyId: id })],
  ] as const) {
    if (ids.length === 0) continue
    for (const row of await monthRows(engine, column, ids, now)) {
      const counted = usage.get(memberOf(String(row.subject)))
      if (counted === undefined) continue
      const apiId = String(row.key_space_id)
      if (!billed.has(apiId)) {
        const settings = await apiSettings.of(apiId)
        billed.set(apiId, new Set(settings.billableOutcomes ?? DEFAULT_BILLABLE_OUTCOMES))
      }
      const outcome = String(row.outcome)
      // An outcome the engine holds that no verdict has (none today) is counted nowhere, as getUsage does.
      const billable = outcome in OUTCOME_FIELD && billed.get(apiId)!.has(outcome) ? Number(row.n) : 0
      const credits = Number(row.credits)
      for (const period of Number(row.today) === 1 ? (['day', 'month'] as const) : (['month'] as const)) {
        counted[period].billable += billable
        counted[period].credits += credits
      }
    }
  }
  return usage
}

/** The month's usage of `ids` (by `column`) per api, outcome and whether it was today, from the daily rollup. */
function monthRows(engine: AnalyticsEngine, column: 'external_id' | 'key_id', ids: readonly string[], now: number) {
  const month = usagePeriodAt('month', now)
  const day = usagePeriodAt('day', now)
  const params: Record<string, string> = {
    day: String(day.start / 1000),
    month: String(month.start / 1000),
    end: String(month.end / 1000),
  }
  const sql =
    `SELECT ${column} AS subject, key_space_id, outcome, ` +
    "time = toDate(toDateTime({day:Int64}, 'UTC')) AS today, sum(count) AS n, sum(spent_credits) AS credits " +
    'FROM `key_verifications_per_day_v1` ' +
    "WHERE time >= toDate(toDateTime({month:Int64}, 'UTC')) AND time < toDate(toDateTime({end:Int64}, 'UTC')) " +
    `AND ${column} IN ${stringListParam('id', ids, params)} ` +
    `GROUP BY subject, key_space_id, outcome, today SETTINGS ${READ_SETTINGS}`
  return engine.query(sql, params)
}
