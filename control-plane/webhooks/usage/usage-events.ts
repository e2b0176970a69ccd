import type { Logger } from 'pino'
import type { Clock } from '../../../shared/clock.js'
import { DEFAULT_BILLABLE_OUTCOMES, type ApiSettings } from '../../../shared/api-settings.js'
import type { AnalyticsBufferStore } from '../../../shared/store/analytics-buffer/analytics-buffer-store.js'
import type { WebhookStore } from '../../../shared/store/webhooks/webhook-store.js'
import type { WebhookEndpoint, WebhookEvent } from '../../../shared/webhook.js'
import { eventId } from '../events/change-events.js'
import { scopeOfApis } from '../endpoints/endpoint-wants.js'
import type { AnalyticsEngine } from '../../analytics/engine/analytics-engine.js'
import { addVerifications, noUsage, type Usage } from '../../analytics/usage-sum.js'

/** The usage events, each of a period: an hour or a UTC day. */
export const USAGE_EVENT_PERIODS = {
  'usage.hourly': { rollup: 'key_verifications_per_hour_v1', ms: 3_600_000 },
  'usage.daily': { rollup: 'key_verifications_per_day_v1', ms: 86_400_000 },
} as const
export type UsageEventType = keyof typeof USAGE_EVENT_PERIODS

/** Where the events of each type stand, and how far every verification is in the engine (ingest watermark). */
export interface UsageEventMarks {
  /** The start of the next period of `type` to send events of (Unix ms), if any was sent. */
  nextPeriod(type: UsageEventType): Promise<number | undefined>
  /** Records that the events of every period of `type` before `start` were queued. */
  advancePeriod(type: UsageEventType, start: number): Promise<void>
}

/** The marks of usage events, kept beside the ingest's watermark (the store's analytics marks). */
export function usageEventMarks(marks: Pick<AnalyticsBufferStore, 'readMark' | 'raiseMark'>): UsageEventMarks {
  return {
    nextPeriod: (type) => marks.readMark(`next.${type}`),
    advancePeriod: (type, start) => marks.raiseMark(`next.${type}`, start),
  }
}

/** A usage event's data: whose usage, over which period and apis, and how much. */
export interface UsageEventData extends Usage {
  /** The identity's externalId; absent for a key without an identity. */
  externalId?: string
  /** A key without an identity; absent for an identity. */
  keyId?: string
  /** The period, Unix ms: its start (inclusive) and end (exclusive), UTC. */
  period: { start: number; end: number }
  /** The apis summed over: the receiving endpoint's, or `*` (every api) for an unscoped one. */
  apiIds: string[] | '*'
}

export interface UsageEventsDeps {
  engine: AnalyticsEngine
  clock: Clock
  webhooks: Pick<WebhookStore, 'listEndpoints' | 'enqueue' | 'getEvent'>
  marks: UsageEventMarks
  /** The outcomes each api bills. */
  apiSettings: { of(apiId: string): Promise<ApiSettings> }
  log: Logger
  /** Told after events were queued, so that this process's delivery worker claims them at once. */
  onQueued?: () => void
  /** Rows read from the engine per query (default PAGE_ROWS; tests page with fewer). */
  pageRows?: number
}

/** Periods of one type sent per run, at most: a control plane back after a long stop catches up over several runs. */
const PERIODS_PER_RUN = 24
/** Rows read from the engine per query: a period's subjects are read page by page. */
const PAGE_ROWS = 50_000
/** A usage read is one of the control plane's own: bounded as a report is. */
const READ_SETTINGS = "max_execution_time = 30, max_threads = 2, result_overflow_mode = 'throw'"

/** Whose usage an event is of: an identity, or a key without one. */
type Subject = { externalId: string; keyId?: undefined } | { keyId: string; externalId?: undefined }

/** One row of a period's usage: a subject's verifications of one outcome in one api. */
interface UsageRow {
  external_id: string
  subject_key: string
  key_space_id: string
  outcome: string
  n: number
  credits: number
}

/**
 * Sends `usage.hourly` and `usage.daily` webhook events: for each complete period, one event per identity (by its
 * externalId), and per key without an identity, that had verifications in it, with its usage summed over the apis each
 * subscribed endpoint is scoped to (`*`: every api). A period is complete once the ingest's watermark — the time up
 * to which every verifier's rows are in the engine (analytics-ingest.ts) — is past its end: a control plane or engine
 * down for minutes delays the events, never shortens what they count.
 *
 * An event's id is derived from its type, subject, period and apis, so a period sent again (a run that died between
 * queueing and recording its progress) makes the same events, and an event still kept is not queued again. Periods
 * are sent from the one in progress when the first endpoint wanting usage events appeared on: none are made up for
 * the time before.
 */
export class UsageEvents {
  constructor(private readonly deps: UsageEventsDeps) {}

  /**
   * Queues the events of every complete period up to `watermark` (Unix ms: every verification before it is in the
   * engine) not sent yet, at most PERIODS_PER_RUN per type; answers how many events were queued.
   */
  async run(watermark: number): Promise<number> {
    const endpoints = await this.deps.webhooks.listEndpoints()
    let queued = 0
    for (const type of Object.keys(USAGE_EVENT_PERIODS) as UsageEventType[]) {
      const wanting = endpoints.filter((endpoint) => wantsType(endpoint, type))
      const { ms } = USAGE_EVENT_PERIODS[type]
      const next = await this.deps.marks.nextPeriod(type)
      if (next === undefined) {
        // No period sent yet: from the one in progress, once an endpoint wants the type.
        if (wanting.length > 0) await this.deps.marks.advancePeriod(type, Math.floor(watermark / ms) * ms)
        continue
      }
      let start = next
      for (let sent = 0; sent < PERIODS_PER_RUN && periodEnd(type, start) <= watermark; sent++) {
        if (wanting.length > 0) queued += await this.sendPeriod(type, start, wanting)
        start = periodEnd(type, start)
        await this.deps.marks.advancePeriod(type, start)
      }
    }
    if (queued > 0) this.deps.onQueued?.()
    return queued
  }

  /** Queues the events of the period of `type` starting at `start` to the endpoints `wanting` them. */
  private async sendPeriod(type: UsageEventType, start: number, wanting: WebhookEndpoint[]): Promise<number> {
    const byScope = new Map<string, { apiIds: string[] | '*'; endpointIds: string[] }>()
    for (const endpoint of wanting) {
      const apiIds = scopeOfApis(endpoint.apiIds ?? [])
      const key = JSON.stringify(apiIds)
      const scope = byScope.get(key) ?? { apiIds, endpointIds: [] }
      scope.endpointIds.push(endpoint.id)
      byScope.set(key, scope)
    }
    const end = periodEnd(type, start)
    const subjects = await this.usageOf(
      type,
      start,
      [...byScope.values()].map((scope) => scope.apiIds),
    )
    let queued = 0
    for (const { subject, byScopeUsage } of subjects) {
      for (const [i, { apiIds, endpointIds }] of [...byScope.values()].entries()) {
        const usage = byScopeUsage[i]!
        if (usage.verifications.total === 0) continue
        const data: UsageEventData = { ...subject, period: { start, end }, apiIds, ...usage }
        const id = eventId(
          `${type}|${subject.externalId ?? ''}|${subject.keyId ?? ''}|${start}|${JSON.stringify(apiIds)}`,
        )
        // Kept already: queued by a run that died before it recorded its progress.
        if ((await this.deps.webhooks.getEvent(id)) !== null) continue
        const event: WebhookEvent = { id, type, at: end, data: data as unknown as Record<string, unknown> }
        const now = this.deps.clock.now()
        await this.deps.webhooks.enqueue({ ...event, madeAt: now }, endpointIds, now)
        queued++
      }
    }
    return queued
  }

  /**
   * Each subject's usage in the period, summed over each of `scopes` (in their order), billed by each api's
   * billable outcomes: the identities (by externalId), and the keys without one.
   */
  private async usageOf(
    type: UsageEventType,
    start: number,
    scopes: (string[] | '*')[],
  ): Promise<{ subject: Subject; byScopeUsage: Usage[] }[]> {
    const subjects = new Map<string, { subject: Subject; byScopeUsage: Usage[] }>()
    const billed = new Map<string, ReadonlySet<string>>()
    let after: UsageRow | undefined
    for (;;) {
      const rows = await this.page(type, start, after)
      for (const row of rows) {
        const id = JSON.stringify([row.external_id, row.subject_key])
        let entry = subjects.get(id)
        if (entry === undefined) {
          const subject: Subject = row.external_id !== '' ? { externalId: row.external_id } : { keyId: row.subject_key }
          entry = { subject, byScopeUsage: scopes.map(() => noUsage()) }
          subjects.set(id, entry)
        }
        if (!billed.has(row.key_space_id)) {
          const settings = await this.deps.apiSettings.of(row.key_space_id)
          billed.set(row.key_space_id, new Set(settings.billableOutcomes ?? DEFAULT_BILLABLE_OUTCOMES))
        }
        for (const [i, scope] of scopes.entries()) {
          if (scope !== '*' && !scope.includes(row.key_space_id)) continue
          addVerifications(entry.byScopeUsage[i]!, row.outcome, row.n, row.credits, billed.get(row.key_space_id)!)
        }
      }
      if (rows.length < (this.deps.pageRows ?? PAGE_ROWS)) break
      after = rows.at(-1)
    }
    return [...subjects.values()]
  }

  /** One page of the period's rows, in order, after `after`. */
  private async page(type: UsageEventType, start: number, after: UsageRow | undefined): Promise<UsageRow[]> {
    const { rollup } = USAGE_EVENT_PERIODS[type]
    const params: Record<string, string> = { start: String(Math.floor(start / 1000)) }
    const filters = [
      type === 'usage.daily'
        ? "time = toDate(toDateTime({start:Int64}, 'UTC'))"
        : "time = toDateTime({start:Int64}, 'UTC')",
      // Verifications of unknown keys have no subject.
      "key_id != ''",
    ]
    if (after !== undefined) {
      filters.push(
        '(external_id, subject_key, key_space_id, outcome) > ({e:String}, {k:String}, {a:String}, {o:String})',
      )
      Object.assign(params, { e: after.external_id, k: after.subject_key, a: after.key_space_id, o: after.outcome })
    }
    const sql =
      "SELECT external_id, if(external_id = '', key_id, '') AS subject_key, key_space_id, outcome, " +
      `sum(count) AS n, sum(spent_credits) AS credits FROM \`${rollup}\` WHERE ${filters.join(' AND ')} ` +
      'GROUP BY external_id, subject_key, key_space_id, outcome ' +
      'ORDER BY external_id, subject_key, key_space_id, outcome ' +
      `LIMIT ${this.deps.pageRows ?? PAGE_ROWS} SETTINGS ${READ_SETTINGS}`
    const rows = await this.deps.engine.query(sql, params)
    return rows.map((row) => ({
      external_id: String(row.external_id),
      subject_key: String(row.subject_key),
      key_space_id: String(row.key_space_id),
      outcome: String(row.outcome),
      n: Number(row.n),
      credits: Number(row.credits),
    }))
  }
}

const periodEnd = (type: UsageEventType, start: number) => start + USAGE_EVENT_PERIODS[type].ms

/** Usage events are opt-in (webhook.ts): sent only to the endpoints that name them. */
const wantsType = (endpoint: WebhookEndpoint, type: UsageEventType) =>
  endpoint.enabled && endpoint.eventTypes.includes(type)
