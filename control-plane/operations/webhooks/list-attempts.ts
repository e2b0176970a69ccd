import type { WebhookAttempt, WebhookDelivery } from '../../../shared/webhook.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { reachableEndpoint } from '../../webhooks/endpoint-access.js'

/** The delivery log of endpoint `endpointId`: its last attempts and its dead letters, newest first (read_endpoint). */
export async function listAttempts(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: { endpointId: string; limit: number },
): Promise<{ attempts: WebhookAttempt[]; dead: WebhookDelivery[] }> {
  const endpoint = await reachableEndpoint(deps.store.webhooks, caller.principal, input.endpointId, 'read_endpoint')
  const [attempts, dead] = await Promise.all([
    deps.store.webhooks.listAttempts(endpoint.id, input.limit),
    deps.store.webhooks.listDead(endpoint.id, input.limit),
  ])
  return { attempts, dead }
}
