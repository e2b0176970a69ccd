import { ApiError } from '../../shared/errors/errors.js'
import { invalid } from '../../shared/errors/errors.js'
import {
  webhookDeliveryId,
  type WebhookAttempt,
  type WebhookEndpoint,
  type WebhookEventType,
} from '../../shared/webhook.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { eventBody } from './delivery/delivery-worker.js'
import { reachableEndpoint } from './endpoints/endpoint-access.js'
import { exampleEvent } from './example-events.js'
import { signatureHeaders } from './delivery/signature-headers.js'

/** The type a test is of when none is asked for: the first thing an integrator's receiver handles. */
export const DEFAULT_TEST_TYPE: WebhookEventType = 'key.created'

export interface SendTestInput {
  endpointId: string
  /** Absent: DEFAULT_TEST_TYPE, or the endpoint's first type if it does not take that one. */
  eventType?: WebhookEventType | undefined
}

/** What one test came to: the attempt as the delivery log keeps it, and the example's id and type. */
export type SendTestResult = WebhookAttempt & { delivered: boolean }

/**
 * Sends the endpoint an example event now (`send_test` on it; 403, then 404): example data of the type, with example
 * ids, never a record of the store, signed with the endpoint's secrets by the sender real deliveries go through (its
 * address policy, timeout and answer cap). Sent once, enabled or not (an endpoint is tested before it is turned on),
 * never queued, kept or retried; the attempt goes to the endpoint's tests, beside its delivery log (never pushing a
 * delivery's attempt out of it), and is answered. The answer waits for the endpoint's, at most WEBHOOK_TIMEOUT_MS;
 * one test at a time per endpoint on this control plane (429 while one is under way: a slow receiver is never held by
 * a pile of them).
 */
export async function sendTest(deps: ControlPlaneDeps, caller: Caller, input: SendTestInput): Promise<SendTestResult> {
  const endpoint = await reachableEndpoint(deps.store.webhooks, caller.principal, input.endpointId, 'send_test')
  // A billing provider takes usage, not a signed test event: an export's deliveries show in its log instead.
  if (endpoint.export !== undefined)
    throw invalid(
      'endpointId',
      'a meter export is sent usage only, never a test event: its delivery log shows each send',
    )
  if (!deps.webhookTests.start(endpoint.id)) {
    const seconds = Math.ceil(deps.webhookPolicy.timeoutMs / 1000)
    throw new ApiError(
      'RATE_LIMITED',
      `a test event is being sent to webhook endpoint ${endpoint.id} already: one at a time; retry in ${seconds} s`,
      { 'retry-after': String(seconds) },
    )
  }
  try {
    return await sendExample(deps, caller, endpoint, input.eventType)
  } finally {
    deps.webhookTests.finish(endpoint.id)
  }
}

/** Sends the example, records the attempt and audits it. */
async function sendExample(
  deps: ControlPlaneDeps,
  caller: Caller,
  endpoint: WebhookEndpoint,
  eventType: WebhookEventType | undefined,
): Promise<SendTestResult> {
  const { principal } = caller
  const types = endpoint.eventTypes
  const type = eventType ?? (types.length === 0 || types.includes(DEFAULT_TEST_TYPE) ? DEFAULT_TEST_TYPE : types[0]!)
  const sentAt = deps.clock.now()
  const event = exampleEvent(type, sentAt)
  const body = eventBody(event)
  const answer = await deps.webhookSender.send(
    endpoint.url,
    signatureHeaders(endpoint.secrets, event.id, sentAt, body),
    body,
  )
  const delivered = answer.status !== undefined && answer.status >= 200 && answer.status < 300
  const attempt: WebhookAttempt = {
    deliveryId: webhookDeliveryId(event.id, endpoint.id),
    eventId: event.id,
    eventType: type,
    at: sentAt,
    attempt: 1,
    latencyMs: answer.latencyMs,
    outcome: delivered ? 'delivered' : 'failed',
    ...(answer.status !== undefined ? { status: answer.status } : {}),
    ...(delivered ? {} : { error: answer.error ?? `HTTP ${answer.status}` }),
    ...(answer.snippet !== undefined ? { responseSnippet: answer.snippet } : {}),
    test: true,
  }
  await deps.store.webhooks.recordAttempt(endpoint.id, attempt)
  await deps.audit.record(caller, 'webhooks.sendTest', {
    context: {
      endpointId: endpoint.id,
      eventId: event.id,
      eventType: type,
      outcome: attempt.outcome,
      ...(answer.status !== undefined ? { status: answer.status } : {}),
    },
  })
  caller.log.info(
    { endpointId: endpoint.id, eventType: type, outcome: attempt.outcome, rootKeyId: principal.rootKeyId },
    'webhook test event sent',
  )
  return { ...attempt, delivered }
}
