import { WEBHOOK_TESTS_KEPT, type WebhookAttempt, type WebhookDelivery } from '../../shared/webhook.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { reachableEndpoint } from './endpoints/endpoint-access.js'

/**
 * The delivery log of endpoint `endpointId` (read_endpoint): its last `limit` attempts at deliveries, with its last
 * tests' attempts (at most `limit` and WEBHOOK_TESTS_KEPT) among them, newest first, and its last `limit` dead letters.
 * Tests are kept apart and counted apart, so that however many are sent they never take a delivery's place.
 */
export async function listAttempts(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: { endpointId: string; limit: number },
): Promise<{ attempts: WebhookAttempt[]; dead: WebhookDelivery[] }> {
  const { webhooks } = deps.store
  const endpoint = await reachableEndpoint(webhooks, caller.principal, input.endpointId, 'read_endpoint')
  const [attempts, tests, dead] = await Promise.all([
    webhooks.listAttempts(endpoint.id, input.limit),
    webhooks.listTestAttempts(endpoint.id, Math.min(input.limit, WEBHOOK_TESTS_KEPT)),
    webhooks.listDead(endpoint.id, input.limit),
  ])
  // Both lists are newest first; a stable sort keeps each one's order where times are equal.
  return { attempts: [...attempts, ...tests].sort((a, b) => b.at - a.at), dead }
}
