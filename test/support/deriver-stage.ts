import pino from 'pino'
import { Registry } from 'prom-client'
import { EventDeriver, type EventDeriverDeps } from '../../control-plane/webhooks/events/event-deriver.js'
import { createWebhookMetrics } from '../../control-plane/webhooks/webhook-metrics.js'
import { DEFAULT_WEBHOOK_POLICY } from '../../control-plane/webhooks/webhook-policy.js'
import { MemoryChangeFeed } from '../../shared/feed/memory-change-feed.js'
import { createMemoryStore, type MemoryStore } from '../../shared/store/memory-store.js'
import type { NewKeyRecord } from '../../shared/keys/records.js'
import type { WebhookEndpoint, WebhookEvent } from '../../shared/webhook.js'
import { newKey } from '../integration/contract-records.js'

export const HOUR = 3_600_000

/** A clock the test moves: the store's leases and the deriver's deadlines run on it. */
export function testClock(start = Date.now()) {
  let now = start
  return { now: () => now, advance: (ms: number) => void (now += ms) }
}

export function testEndpoint(id: string, extra: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    id,
    url: 'https://hooks.example.com/keygate',
    eventTypes: [],
    enabled: true,
    secrets: [{ secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, createdAt: 0 }],
    createdAt: 0,
    ...extra,
  }
}

/**
 * A memory store (and the feed its writes publish on) with three endpoints (every type; `key.deleted` only;
 * disabled), a clock the test moves, derivers on them, and what they queued.
 */
export async function deriverStage() {
  const clock = testClock()
  const feed = new MemoryChangeFeed()
  const store: MemoryStore = createMemoryStore(feed, { clock })
  await store.webhooks.createEndpoint(testEndpoint('whep_all'))
  await store.webhooks.createEndpoint(testEndpoint('whep_deletes', { eventTypes: ['key.deleted'] }))
  await store.webhooks.createEndpoint(testEndpoint('whep_off', { enabled: false }))

  const deriver = (holder = 'test', extra: Partial<EventDeriverDeps> = {}) =>
    new EventDeriver({
      changes: store.changes,
      snapshots: store.snapshots,
      keys: store.keys,
      entities: store.entities,
      rootKeys: store.rootKeys,
      webhooks: store.webhooks,
      policy: DEFAULT_WEBHOOK_POLICY,
      clock,
      log: pino({ level: 'silent' }),
      metrics: createWebhookMetrics(new Registry(), async () => 0),
      holder,
      ...extra,
    })

  /** The events queued since the last call (each delivery taken off the queue), with the endpoint each is for. */
  const deliveries = async (): Promise<{ event: WebhookEvent; endpointId: string }[]> => {
    const due = await store.webhooks.claimDue(clock.now() + 365 * 24 * HOUR, 1, 1_000)
    const rows = await Promise.all(
      due.map(async ({ eventId, endpointId }) => ({ event: (await store.webhooks.getEvent(eventId))!, endpointId })),
    )
    for (const delivery of due) await store.webhooks.complete(delivery.id)
    return rows
  }

  /** What is queued: [event type, endpoint id, the key it is about]. */
  const queued = async () =>
    (await deliveries()).map(({ event, endpointId }) => [event.type, endpointId, event.data.keyId] as const)

  /** A new key of the api, stored. */
  const createKey = async (apiId: string, extra: Partial<NewKeyRecord> = {}) => {
    const write = await store.keys.createKey(newKey(apiId, extra))
    if (!write) throw new Error('create failed')
    return write
  }

  return { store, feed, clock, deriver, deliveries, queued, createKey }
}
