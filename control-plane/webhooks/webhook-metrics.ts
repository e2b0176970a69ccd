import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import { SEND_LANES, type SendLane } from './delivery/send-lanes.js'

/** Why the deriver could not go on from its cursor: the log trimmed past it, the shard's data lost, or rolled back. */
export type LogGap = 'trimmed' | 'epoch' | 'rollback'
const LOG_GAPS: readonly LogGap[] = ['trimmed', 'epoch', 'rollback']

/** What the webhooks' deriver and worker report (on the control plane's /metrics). */
export interface WebhookMetrics {
  /** One attempt at a delivery, how it ended and how long the endpoint took. */
  attempted(endpointId: string, outcome: 'delivered' | 'retry' | 'dead', seconds: number): void
  /** A delivery arrived, `seconds` after its event happened (retries included). */
  delivered(endpointId: string, seconds: number): void
  /** Events derived from the change logs, by type. */
  derived(type: string): void
  /** A shard's change log could not be read from the deriver's position (trimmed, or its epoch changed). */
  skipped(reason: LogGap): void
  /** Changes in the logs past the cursors, when this process last derived (0 on a process not deriving). */
  behind(changes: number): void
  /** A change derived without its snapshot: its events describe the record as it was found, not as written. */
  describedLate(): void
  /** Requests this process's worker has out in a lane (send-lanes.ts). */
  inFlight(lane: SendLane, requests: number): void
}

const SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600]

/** The webhook metrics on `registry`; the queue depth is read from the store when /metrics is scraped. */
export function createWebhookMetrics(registry: Registry, queueDepth: () => Promise<number>): WebhookMetrics {
  const attempts = new Counter({
    name: 'keygate_webhook_attempts_total',
    help: 'Webhook delivery attempts, by endpoint and outcome (delivered, retry: failed and tried again later, dead: given up)',
    labelNames: ['endpoint', 'outcome'],
    registers: [registry],
  })
  const requestSeconds = new Histogram({
    name: 'keygate_webhook_request_duration_seconds',
    help: 'How long endpoints took to answer a webhook request (or to fail), by endpoint',
    labelNames: ['endpoint'],
    buckets: SECONDS,
    registers: [registry],
  })
  const latency = new Histogram({
    name: 'keygate_webhook_delivery_latency_seconds',
    help: 'From an event happening to its delivery succeeding, retries included, by endpoint',
    labelNames: ['endpoint'],
    buckets: SECONDS,
    registers: [registry],
  })
  const events = new Counter({
    name: 'keygate_webhook_events_total',
    help: 'Webhook events derived from the change logs, by type',
    labelNames: ['type'],
    registers: [registry],
  })
  const skipped = new Counter({
    name: 'keygate_webhook_log_gaps_total',
    help: 'Times the webhooks deriver could not read a shard log from where it was (trimmed; epoch: Redis lost the shard data; rollback: the shard went back to an older revision); events in the gap are not sent',
    labelNames: ['reason'],
    registers: [registry],
  })
  const behind = new Gauge({
    name: 'keygate_webhook_deriver_behind_changes',
    help: 'Changes in the shard logs not yet derived into webhook events, as the deriving control plane last saw them (0 on the others)',
    registers: [registry],
  })
  const describedLate = new Counter({
    name: 'keygate_webhook_snapshots_missing_total',
    help: 'Changes the webhooks deriver read without the record as the change wrote it (its snapshot was trimmed before the deriver came to it): their events describe the record as it then was',
    registers: [registry],
  })
  const sending = new Gauge({
    name: 'keygate_webhook_requests_in_flight',
    help: "Webhook requests this control plane's worker has out, by lane: fast (to endpoints that answer quickly, whatever the status), slow (whose requests time out, hang or take a quarter of the timeout, until they answer quickly 5 times in a row), new (no request ended yet on this control plane)",
    labelNames: ['lane'],
    registers: [registry],
  })
  for (const lane of SEND_LANES) sending.set({ lane }, 0)
  // Each reason from 0, so that the first gap is an increase an alert sees.
  for (const reason of LOG_GAPS) skipped.inc({ reason }, 0)
  new Gauge({
    name: 'keygate_webhook_queue_depth',
    help: 'Webhook deliveries queued (due now or later), across every control plane',
    registers: [registry],
    async collect() {
      // A scrape while the store is down keeps the last value read rather than failing /metrics.
      const depth = await queueDepth().catch(() => undefined)
      if (depth !== undefined) this.set(depth)
    },
  })
  return {
    attempted(endpointId, outcome, seconds) {
      attempts.inc({ endpoint: endpointId, outcome })
      requestSeconds.observe({ endpoint: endpointId }, seconds)
    },
    delivered(endpointId, seconds) {
      latency.observe({ endpoint: endpointId }, Math.max(0, seconds))
    },
    derived(type) {
      events.inc({ type })
    },
    skipped(reason) {
      skipped.inc({ reason })
    },
    behind(changes) {
      behind.set(changes)
    },
    describedLate() {
      describedLate.inc()
    },
    inFlight(lane, requests) {
      sending.set({ lane }, requests)
    },
  }
}
