import type { Logger } from 'pino'
import type { Clock } from '../../../shared/clock.js'
import type { ApiSettings } from '../../../shared/api-settings.js'
import type { AnalyticsBufferStore } from '../../../shared/store/analytics-buffer/analytics-buffer-store.js'
import type { EntityStore } from '../../../shared/store/entities/entity-store.js'
import type { WebhookStore } from '../../../shared/store/webhooks/webhook-store.js'
import {
  USAGE_THRESHOLD_INDEX,
  usagePeriodAt,
  usageSubjectMember,
  usageSubjectOf,
  type UsageSubject,
  type UsageThreshold,
} from '../../../shared/usage-threshold.js'
import type { WebhookEndpoint, WebhookEvent } from '../../../shared/webhook.js'
import { eventId } from '../events/change-events.js'
import { endpointWants } from '../endpoints/endpoint-wants.js'
import type { AnalyticsEngine } from '../../analytics/engine/analytics-engine.js'
import { currentUsage } from '../../analytics/current-usage.js'
import { UsageThresholdIndex } from '../../analytics/usage-threshold-index.js'

export const USAGE_THRESHOLD_EVENT = 'usage.threshold'

/** A subject's thresholds, as its record holds them now; `gone` when the record is gone for good (a deleted key). */
export type SubjectThresholds = { thresholds: readonly UsageThreshold[]; apiId?: string } | 'gone' | undefined

export interface UsageAlertsDeps {
  engine: AnalyticsEngine
  clock: Clock
  webhooks: Pick<WebhookStore, 'listEndpoints' | 'enqueue' | 'getEvent'>
  index: Pick<EntityStore, 'listIndex' | 'addToIndex' | 'removeFromIndex'>
  /** The subject's thresholds (a key's with its api): undefined when it holds none, or is gone for now. */
  thresholdsOf(subject: UsageSubject): Promise<SubjectThresholds>
  /** Which crossings were sent: a mark per threshold, the start of the last period it was sent for; LOOKED_THROUGH. */
  marks: Pick<AnalyticsBufferStore, 'readMark' | 'raiseMark'>
  /** The outcomes each api bills. */
  apiSettings: { of(apiId: string): Promise<ApiSettings> }
  log: Logger
  /** Told after events were queued, so that this process's delivery worker claims them at once. */
  onQueued?: () => void
}

/** A usage.threshold event's data: whose usage crossed which threshold, in which period, and by how much. */
export interface UsageThresholdEventData {
  /** The identity's externalId (its usage over every api); absent for a key. */
  externalId?: string
  /** The key (its usage, in its api); absent for an identity. */
  keyId?: string
  /** The key's api; absent for an identity. */
  apiId?: string
  threshold: UsageThreshold
  /** The usage counted when the crossing was seen: at least the threshold's value. */
  usage: number
  /** The period it was crossed in, Unix ms: its start (inclusive) and end (exclusive), UTC. */
  period: { start: number; end: number }
}

/**
 * How often the ingest's passes (every second or two while rows come) look at thresholds, at most: a crossing is sent
 * within this of its rows reaching the engine, well within the minute promised.
 */
export const ALERTS_EVERY_MS = 10_000
/** The mark of the days looked at once every row of them was in: the end of the last (the start of the next). */
export const LOOKED_THROUGH = 'threshold.looked-through'
/** Subjects read from the index, and looked up in the engine, per query. */
const SUBJECTS_PER_QUERY = 1_000

/** A subject looked at: its thresholds, and a key's api. */
interface Watched {
  subject: UsageSubject
  thresholds: readonly UsageThreshold[]
  apiId?: string
}

/**
 * Sends `usage.threshold` webhook events: when an identity's or a key's usage in the current UTC day or month —
 * billable verifications or credits spent — reaches one of its thresholds (keys.updateKey and
 * identities.updateIdentity set them), one event per threshold and period, as soon as the verifications that crossed
 * it are in the engine (the ingest runs this after its passes). Usage only grows within a period, so what is crossed
 * stays crossed: each threshold keeps a mark — the start of the last period it was sent for — and an event's id is
 * derived from the threshold and the period, so that a run dying between queueing and marking queues nothing twice.
 * A crossing no endpoint takes is not marked. Rows reach the engine seconds after their verification, so the day
 * before (and, on a month's first day, the month before) is looked at again until a run has looked at it with every
 * row of it in (LOOKED_THROUGH, by the ingest's watermark): a crossing in its last seconds is sent for it.
 *
 * An identity's usage is over every api, so its events go to unscoped endpoints only; a key's carry its api
 * (endpoint-wants.ts). The index lists the subjects to look at (usage-threshold-index.ts): a deleted key's member is
 * dropped when it is found gone.
 */
export class UsageAlerts {
  private lastRun = -Infinity

  constructor(private readonly deps: UsageAlertsDeps) {}

  /** run(), if ALERTS_EVERY_MS have passed since the last (or the clock went back): after each ingest pass. */
  async runIfDue(watermark: number): Promise<number> {
    const now = this.deps.clock.now()
    if (now >= this.lastRun && now - this.lastRun < ALERTS_EVERY_MS) return 0
    this.lastRun = now
    return this.run(watermark)
  }

  /**
   * Looks at every subject's thresholds now, and at the day before until it was looked at with every row of it in
   * (`watermark`, Unix ms: every verification before it is in the engine); answers how many events were queued.
   */
  async run(watermark: number): Promise<number> {
    const now = this.deps.clock.now()
    const today = usagePeriodAt('day', now).start
    // None looked at yet: from today on.
    const lookedThrough = await this.deps.marks.readMark(LOOKED_THROUGH)
    const lookBack = lookedThrough !== undefined && lookedThrough < today
    const queued = await this.lookAtAll(lookBack ? [today - 1, now] : [now], now)
    if (watermark >= today && lookedThrough !== today) await this.deps.marks.raiseMark(LOOKED_THROUGH, today)
    return queued
  }

  /** Sends what every subject crossed in the periods holding each of `times` (in order), at `now`. */
  private async lookAtAll(times: number[], now: number): Promise<number> {
    const endpoints = (await this.deps.webhooks.listEndpoints()).filter(
      (endpoint) => endpoint.enabled && endpoint.eventTypes.includes(USAGE_THRESHOLD_EVENT),
    )
    // Nobody to tell: crossings are not marked either, so an endpoint added later in the period is still told.
    if (endpoints.length === 0) return 0
    let queued = 0
    let cursor: string | undefined
    do {
      const page = await this.deps.index.listIndex(USAGE_THRESHOLD_INDEX, {
        limit: SUBJECTS_PER_QUERY,
        ...(cursor === undefined ? {} : { cursor }),
      })
      queued += await this.lookAt(page.members, endpoints, times, now)
      cursor = page.cursor
    } while (cursor !== undefined)
    if (queued > 0) this.deps.onQueued?.()
    return queued
  }

  /** Sends what the index members `members` crossed in the periods holding each of `times` (in order), at `now`. */
  private async lookAt(members: string[], endpoints: WebhookEndpoint[], times: number[], now: number): Promise<number> {
    const watched: Watched[] = []
    for (const member of members) {
      const subject = usageSubjectOf(member)
      if (subject === undefined) continue
      const found = await this.deps.thresholdsOf(subject)
      if (found === 'gone') {
        // Read again once unlisted: a rolled key is listed before it is written, and may have been written since.
        await new UsageThresholdIndex(this.deps.index).afterClearing(subject, async () => {
          const again = await this.deps.thresholdsOf(subject)
          return again === 'gone' ? undefined : again?.thresholds
        })
      } else if (found !== undefined && found.thresholds.length > 0) watched.push({ subject, ...found })
    }
    let queued = 0
    if (watched.length > 0) for (const at of times) queued += await this.sendCrossed(watched, at, endpoints, now)
    return queued
  }

  /** Sends what the `watched` subjects crossed in the day and the month holding `at`, at `now`. */
  private async sendCrossed(
    watched: Watched[],
    at: number,
    endpoints: WebhookEndpoint[],
    now: number,
  ): Promise<number> {
    const subjects = watched.map((entry) => entry.subject)
    const usage = await currentUsage(this.deps.engine, this.deps.apiSettings, subjects, at)
    let queued = 0
    for (const { subject, thresholds, apiId } of watched) {
      const member = usageSubjectMember(subject)
      const counted = usage.get(member)!
      for (const threshold of thresholds) {
        const used = counted[threshold.period][threshold.measure]
        if (used < threshold.value) continue
        const period = usagePeriodAt(threshold.period, at)
        const mark = `threshold|${member}|${threshold.measure}|${threshold.period}|${threshold.value}`
        const sentFor = await this.deps.marks.readMark(mark)
        // Sent for this period. A mark past a period under way means the clock went back; past one that ended, it may
        // be the next period's, sent first: the event id tells then.
        if (sentFor === period.start || (sentFor !== undefined && sentFor > period.start && period.end > now)) continue
        const data: UsageThresholdEventData = {
          ...('identity' in subject ? { externalId: subject.identity } : { keyId: subject.keyId, apiId }),
          threshold: { ...threshold },
          usage: used,
          period,
        }
        const sent = await this.send(`${mark}|${period.start}`, data, endpoints, now)
        // Taken by no endpoint (each scoped to other apis): not marked, so that one added later in the period is told.
        if (sent === 'untaken') continue
        if (sent === 'queued') queued++
        await this.deps.marks.raiseMark(mark, period.start)
      }
    }
    return queued
  }

  /**
   * Queues the event of `data` (id from `identity`) to the endpoints that take it: `kept` if it was queued before,
   * `untaken` if none takes it.
   */
  private async send(
    identity: string,
    data: UsageThresholdEventData,
    endpoints: WebhookEndpoint[],
    now: number,
  ): Promise<'queued' | 'kept' | 'untaken'> {
    const id = eventId(`${USAGE_THRESHOLD_EVENT}|${identity}`)
    // Kept already: queued by a run that died before it marked the threshold.
    if ((await this.deps.webhooks.getEvent(id)) !== null) return 'kept'
    const event: WebhookEvent = {
      id,
      type: USAGE_THRESHOLD_EVENT,
      at: now,
      data: data as unknown as Record<string, unknown>,
    }
    const taking = endpoints.filter((endpoint) => endpointWants(endpoint, event)).map((endpoint) => endpoint.id)
    if (taking.length === 0) return 'untaken'
    await this.deps.webhooks.enqueue({ ...event, madeAt: now }, taking, now)
    return 'queued'
  }
}
