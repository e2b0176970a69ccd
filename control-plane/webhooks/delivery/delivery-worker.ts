import type { Logger } from 'pino'
import type { Clock } from '../../../shared/clock.js'
import type { WebhookStore } from '../../../shared/store/webhooks/webhook-store.js'
import type { WebhookAttempt, WebhookDelivery, WebhookEvent } from '../../../shared/webhook.js'
import type { EndpointAnswer, EndpointSender } from './endpoint-sender.js'
import { endpointWants } from '../endpoints/endpoint-wants.js'
import { SendLanes } from './send-lanes.js'
import { signatureHeaders } from './signature-headers.js'
import type { WebhookMetrics } from '../webhook-metrics.js'
import type { WebhookPolicy } from '../webhook-policy.js'
import type { MeterExport } from '../../../shared/meter-export.js'
import type { WebhookEndpoint } from '../../../shared/webhook.js'
import type { MeterExports } from '../exports/meter-exports.js'
import { answerWithout, meterAnswer } from '../exports/meter-requests.js'

/** When a delivery claimed beyond its endpoint's slots goes back to the queue, ms after now, its attempts unchanged. */
const BACK_IN_QUEUE_MS = 1_000
/** How often the worker looks for due deliveries while it has some out or just claimed some, ms. */
const BUSY_POLL_MS = 200
/**
 * And while it has none: a delivery this process's deriver queues wakes it at once (wake()), so this is how late a
 * retry coming due, or a delivery another control plane queued, may go out.
 */
const IDLE_POLL_MS = 1_000
/** The first retry's wait, ms; each next one doubles, up to the policy's retryMaxDelayMs. */
const FIRST_RETRY_MS = 1_000

/** The body every endpoint receives: the Standard Webhooks shape. */
export function eventBody(event: WebhookEvent): string {
  return JSON.stringify({ type: event.type, timestamp: new Date(event.at).toISOString(), data: event.data })
}

/** The wait before attempt `attempts + 1`: doubling, capped, jittered (50–100 %) so retries do not march together. */
export function retryDelayMs(attempts: number, maxDelayMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxDelayMs, FIRST_RETRY_MS * 2 ** Math.min(attempts - 1, 30))
  return Math.round(ceiling * (0.5 + random() / 2))
}

/**
 * Sends the queued deliveries, on every control-plane replica: each claims due deliveries for a lease longer than a
 * request can take, so two replicas never send one delivery at once and one that dies mid-send loses it to the next
 * after the lease (at-least-once; `webhook-id` lets receivers drop the duplicate). A 2xx answer completes a delivery;
 * anything else is retried with backoff until the retry window has passed since it was queued, then dead-lettered.
 * Runs beside the management API, never on its path. Deliveries are sent side by side, in lanes by how long each
 * endpoint's requests hold a slot (send-lanes.ts): endpoints that are slow, or never answer, share a few slots of their
 * own and never hold those of the endpoints that answer quickly. Each slot is refilled as soon as the next look finds
 * it free.
 */
export class DeliveryWorker {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<unknown> | undefined
  private stopped = true
  /** Woken while a claim was under way: claim again as soon as it is done. */
  private woken = false
  /** Deliveries being sent. */
  private readonly inFlight = new Set<Promise<void>>()
  private readonly lanes: SendLanes

  constructor(
    private readonly deps: {
      webhooks: WebhookStore
      sender: Pick<EndpointSender, 'send'>
      policy: WebhookPolicy
      clock: Clock
      log: Logger
      metrics: WebhookMetrics
      /** Meter exports' requests (endpoints with `export`); absent: such endpoints' deliveries are held. */
      exports?: MeterExports
    },
  ) {
    this.lanes = new SendLanes(deps.policy.timeoutMs)
  }

  start(): void {
    this.stopped = false
    this.schedule(0)
  }

  /** Deliveries were queued: claim now rather than at the next look. */
  wake(): void {
    if (this.stopped) return
    if (this.running) this.woken = true
    else this.schedule(0)
  }

  /** Stops claiming; waits for the deliveries being sent. */
  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.running
    await Promise.all(this.inFlight)
  }

  /**
   * Claims what is due, as many as there are free slots, and starts sending them; resolves once they are started,
   * with how many were claimed, whether that filled every free slot, and the deliveries' completion.
   */
  async claim(): Promise<{ claimed: number; filled: boolean; sent: Promise<void> }> {
    const { webhooks, clock, policy, metrics } = this.deps
    const now = clock.now()
    const { lanes, limit } = this.lanes.claimLanes(now)
    if (limit <= 0) return { claimed: 0, filled: false, sent: Promise.resolve() }
    // Endpoints with no slot left in their lane are passed over (their deliveries wait a little): those behind them go
    // out now.
    const due = await webhooks.claimDue(now, policy.timeoutMs + 5_000, limit, lanes)
    const started: Promise<void>[] = []
    for (const delivery of due) {
      // The claim kept to the slots free when it was asked; an endpoint may have changed lanes since.
      const slot = this.lanes.take(delivery.endpointId, clock.now())
      if (slot === undefined) {
        await webhooks.retry(delivery.id, delivery.attempts, clock.now() + BACK_IN_QUEUE_MS)
        continue
      }
      metrics.inFlight(slot.lane, this.lanes.inFlight(slot.lane))
      const sent: Promise<void> = this.deliver(delivery).finally(() => {
        this.inFlight.delete(sent)
        this.lanes.release(slot)
        metrics.inFlight(slot.lane, this.lanes.inFlight(slot.lane))
      })
      this.inFlight.add(sent)
      started.push(sent)
    }
    return { claimed: due.length, filled: due.length === limit, sent: Promise.all(started).then(() => {}) }
  }

  /** Sends what is due now; resolves when those are done. How many it claimed. */
  async runOnce(): Promise<number> {
    const { claimed, sent } = await this.claim()
    await sent
    return claimed
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.woken = false
      this.running = this.claim()
        .catch((err: unknown) => {
          this.deps.log.warn({ err }, 'webhook deliveries could not be claimed')
          return { claimed: 0, filled: false }
        })
        .then(({ claimed, filled }) => {
          this.running = undefined
          // All free slots filled: more may be due at once.
          if (filled || this.woken) this.schedule(0)
          else this.schedule(claimed > 0 || this.inFlight.size > 0 ? BUSY_POLL_MS : IDLE_POLL_MS)
        })
    }, delayMs)
    this.timer.unref()
  }

  private async deliver(delivery: WebhookDelivery): Promise<void> {
    const { webhooks, clock, log } = this.deps
    try {
      const [event, endpoint] = await Promise.all([
        webhooks.getEvent(delivery.eventId),
        webhooks.getEndpoint(delivery.endpointId),
      ])
      // Gone (the endpoint deleted, the event past retention) or no longer wanted: nothing to send.
      if (event === null || endpoint === null || !endpointWants(endpoint, event)) {
        await webhooks.complete(delivery.id)
        return
      }
      if (endpoint.export !== undefined) {
        await this.deliverExport(delivery, event, { ...endpoint, export: endpoint.export })
        return
      }
      const body = eventBody(event)
      const sentAt = clock.now()
      const answer = await this.deps.sender.send(
        endpoint.url,
        signatureHeaders(endpoint.secrets, event.id, sentAt, body),
        body,
      )
      await this.settle(delivery, event, sentAt, answer, deliveredIf2xx(answer))
    } catch (err) {
      // The store failed: the claim's lease brings the delivery back.
      log.warn({ err, deliveryId: delivery.id }, 'webhook delivery could not be settled')
    }
  }

  /**
   * A usage event to a meter export: its provider's request (exports/meter-exports.ts), or nothing sent — completed
   * when there is nothing to bill, dead-lettered at once when only an operator can change what would be sent.
   */
  private async deliverExport(
    delivery: WebhookDelivery,
    event: WebhookEvent,
    endpoint: WebhookEndpoint & { export: MeterExport },
  ): Promise<void> {
    const { webhooks, clock, sender } = this.deps
    const sentAt = clock.now()
    const plan = this.deps.exports
      ? await this.deps.exports.plan(endpoint, event, sentAt)
      : { hold: 'this control plane sends no meter exports' }
    if ('skip' in plan) {
      await webhooks.complete(delivery.id)
      return
    }
    if ('hold' in plan) {
      await this.settle(delivery, event, sentAt, { latencyMs: 0, error: plan.hold }, 'refused')
      return
    }
    const { url, headers, body, credential } = plan.send
    const answer = await sender.send(url, headers, body)
    const meaning = meterAnswer(endpoint.export.provider, answer)
    await this.settle(delivery, event, sentAt, answerWithout(answer, credential), meaning)
  }

  /**
   * Records the attempt and moves the delivery on as `meaning` says: completed; retried with backoff until the retry
   * window has passed since it was queued, then dead-lettered; or (refused) dead-lettered at once.
   */
  private async settle(
    delivery: WebhookDelivery,
    event: WebhookEvent,
    sentAt: number,
    answer: EndpointAnswer,
    meaning: 'delivered' | 'retry' | 'refused',
  ): Promise<void> {
    const { webhooks, clock, policy, metrics, log } = this.deps
    const attempts = delivery.attempts + 1
    const delivered = meaning === 'delivered'
    // Its lane goes by how long it held the slot, not by its status: a quick 500 costs the others nothing.
    this.lanes.record(delivery.endpointId, answer.latencyMs)
    const now = clock.now()
    const outcome =
      meaning === 'delivered'
        ? 'delivered'
        : meaning === 'refused' || now - delivery.queuedAt >= policy.retryWindowMs
          ? 'dead'
          : 'retry'
    const attempt: WebhookAttempt = {
      deliveryId: delivery.id,
      eventId: event.id,
      eventType: event.type,
      at: sentAt,
      attempt: attempts,
      latencyMs: answer.latencyMs,
      outcome,
      ...(answer.status !== undefined ? { status: answer.status } : {}),
      ...(delivered ? {} : { error: answer.error ?? `HTTP ${answer.status}` }),
      ...(answer.snippet !== undefined ? { responseSnippet: answer.snippet } : {}),
    }
    await webhooks.recordAttempt(delivery.endpointId, attempt)
    metrics.attempted(delivery.endpointId, outcome, answer.latencyMs / 1000)
    if (outcome === 'delivered') {
      await webhooks.complete(delivery.id)
      metrics.delivered(delivery.endpointId, (now - event.at) / 1000)
    } else if (outcome === 'dead') {
      await webhooks.deadLetter({ ...delivery, attempts })
      log.warn({ endpointId: delivery.endpointId, eventId: event.id, attempts }, 'webhook delivery given up')
    } else {
      await webhooks.retry(delivery.id, attempts, now + retryDelayMs(attempts, policy.retryMaxDelayMs))
    }
  }
}

/** A webhook is delivered by any 2xx; anything else is retried until the retry window closes. */
const deliveredIf2xx = (answer: EndpointAnswer): 'delivered' | 'retry' =>
  answer.status !== undefined && answer.status >= 200 && answer.status < 300 ? 'delivered' : 'retry'
