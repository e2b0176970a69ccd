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

export const USAGE_THRESHOLD_EVENT = 'usage.threshold'

/** A subject's thresholds, as its record holds them now; `gone` when the record is gone for good (a deleted key). */
export type SubjectThresholds = { thresholds: readonly UsageThreshold[]; apiId?: string } | 'gone' | undefined

export interface UsageAlertsDeps {
  engine: AnalyticsEngine
  clock: Clock
  webhooks: Pick<WebhookStore, 'listEndpoints' | 'enqueue' | 'getEvent'>
  index: Pick<EntityStore, 'listIndex' | 'removeFromIndex'>
  /** The subject's thresholds (a key's with its api): undefined when it holds none, or is gone for now. */
  thresholdsOf(subject: UsageSubject): Promise<SubjectThresholds>
  /** Which crossings were sent: a mark per threshold, the start of the last period it was sent for. */
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
/** Subjects read from the index, and looked up in the engine, per query. */
const SUBJECTS_PER_QUERY = 1_000

/**
 * Sends `usage.threshold` webhook events: when an identity's or a key's usage in the current UTC day or month —
 * billable verifications or credits spent — reaches one of its thresholds (keys.updateKey and
 * identities.updateIdentity set them), one event per threshold and period, as soon as the verifications that crossed
 * it are in the engine (the ingest runs this after its passes). Usage only grows within a period, so what is crossed
 * stays crossed: each threshold keeps a mark — the start of the last period it was sent for — and an event's id is
 * derived from the threshold and the period, so that a run dying between queueing and marking queues nothing twice.
 *
 * An identity's usage is over every api, so its events go to unscoped endpoints only; a key's carry its api
 * (endpoint-wants.ts). The index lists the subjects to look at (usage-threshold-index.ts): a deleted key's member is
 * dropped when it is found gone.
 */
export class UsageAlerts {
  private lastRun = -Infinity

  constructor(private readonly deps: UsageAlertsDeps) {}

  /** run(), if ALERTS_EVERY_MS have passed since the last (or the clock went back): after each ingest pass. */
  async runIfDue(): Promise<number> {
    const now = this.deps.clock.now()
    if (now >= this.lastRun && now - this.lastRun < ALERTS_EVERY_MS) return 0
    this.lastRun = now
    return this.run()
  }

  /** Looks at every subject's thresholds now; answers how many events were queued. */
  async run(): Promise<number> {
    const endpoints = (await this.deps.webhooks.listEndpoints()).filter(
      (endpoint) => endpoint.enabled && endpoint.eventTypes.includes(USAGE_THRESHOLD_EVENT),
    )
    // Nobody to tell: crossings are not marked either, so an endpoint added later in the period is still told.
    if (endpoints.length === 0) return 0
    const now = this.deps.clock.now()
    let queued = 0
    let cursor: string | undefined
    do {
      const page = await this.deps.index.listIndex(USAGE_THRESHOLD_INDEX, {
        limit: SUBJECTS_PER_QUERY,
        ...(cursor === undefined ? {} : { cursor }),
      })
      queued += await this.lookAt(page.members, endpoints, now)
      cursor = page.cursor
    } while (cursor !== undefined)
    if (queued > 0) this.deps.onQueued?.()
    return queued
  }

  /** Sends what the index members `members` crossed by `now`. */
  private async lookAt(members: string[], endpoints: WebhookEndpoint[], now: number): Promise<number> {
    const watched: { subject: UsageSubject; thresholds: readonly UsageThreshold[]; apiId?: string }[] = []
    for (const member of members) {
      const subject = usageSubjectOf(member)
      if (subject === undefined) continue
      const found = await this.deps.thresholdsOf(subject)
      if (found === 'gone') await this.deps.index.removeFromIndex(USAGE_THRESHOLD_INDEX, member)
      else if (found !== undefined && found.thresholds.length > 0) watched.push({ subject, ...found })
    }
    if (watched.length === 0) return 0
    const subjects = watched.map((entry) => entry.subject)
    const usage = await currentUsage(this.deps.engine, this.deps.apiSettings, subjects, now)
    let queued = 0
    for (const { subject, thresholds, apiId } of watched) {
      const member = usageSubjectMember(subject)
      const counted = usage.get(member)!
      for (const threshold of thresholds) {
        const used = counted[threshold.period][threshold.measure]
        if (used < threshold.value) continue
        const period = usagePeriodAt(threshold.period, now)
        const mark = `threshold|${member}|${threshold.measure}|${threshold.period}|${threshold.value}`
        const sentFor = await this.deps.marks.readMark(mark)
        if (sentFor !== undefined && sentFor >= period.start) continue
        const data: UsageThresholdEventData = {
          ...('identity' in subject ? { externalId: subject.identity } : { keyId: subject.keyId, apiId }),
          threshold: { ...threshold },
          usage: used,
          period,
        }
        if (await this.send(`${mark}|${period.start}`, data, endpoints, now)) queued++
        await this.deps.marks.raiseMark(mark, period.start)
      }
    }
    return queued
  }

  /** Queues the event of `data` (id from `identity`) to the endpoints that take it; false if it was queued before. */
  private async send(
    identity: string,
    data: UsageThresholdEventData,
    endpoints: WebhookEndpoint[],
    now: number,
  ): Promise<boolean> {
    const id = eventId(`${USAGE_THRESHOLD_EVENT}|${identity}`)
    // Kept already: queued by a run that died before it marked the threshold.
    if ((await this.deps.webhooks.getEvent(id)) !== null) return false
    const event: WebhookEvent = {
      id,
      type: USAGE_THRESHOLD_EVENT,
      at: now,
      data: data as unknown as Record<string, unknown>,
    }
    const taking = endpoints.filter((endpoint) => endpointWants(endpoint, event)).map((endpoint) => endpoint.id)
    if (taking.length === 0) return false
    await this.deps.webhooks.enqueue({ ...event, madeAt: now }, taking, now)
    return true
  }
}
