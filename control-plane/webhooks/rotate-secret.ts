import type { WebhookSecret } from '../../shared/webhook.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { changeEndpoint } from './endpoints/endpoint-change.js'
import { endpointView } from './endpoints/endpoint-view.js'
import { newWebhookSecret, rotatedSecrets } from './webhook-secret.js'

/** The longest grace a rotation gives the secrets it replaces, seconds. */
export const MAX_ROTATION_GRACE_SECONDS = 7 * 24 * 3600

export interface RotateSecretInput {
  endpointId: string
  /** How long the secrets it replaces go on signing beside the new one (webhook-secret.ts rotatedSecrets). */
  graceSeconds: number
}

/**
 * A new signing secret for the endpoint (`update_endpoint`; 403, then 404), in the answer this once: deliveries are
 * signed with it from now on, and with the ones it replaces too until the grace is over, so that receivers can move to
 * it without refusing a delivery. Stored only over the endpoint it was made from, as updateEndpoint's changes are
 * (webhooks/endpoint-change.ts): two rotations at once both keep their secret, the later one's first.
 */
export async function rotateSecret(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: RotateSecretInput,
): Promise<WebhookSecret> {
  const { principal } = caller
  const now = deps.clock.now()
  const fresh = newWebhookSecret(now)
  const { before, after } = await changeEndpoint(
    deps.store.webhooks,
    principal,
    input.endpointId,
    'update_endpoint',
    (before) => ({
      ...before,
      secrets: rotatedSecrets(before.secrets, fresh, now, input.graceSeconds * 1000),
      updatedAt: now,
    }),
  )
  // What the secrets were and are, by date only: never a secret.
  const context = {
    graceSeconds: input.graceSeconds,
    secrets: after.secrets.map(({ createdAt, expiresAt }) => ({
      createdAt,
      ...(expiresAt === undefined ? {} : { expiresAt }),
    })),
  }
  await deps.audit.record(caller, 'webhooks.rotateSecret', {
    before: endpointView(before),
    after: endpointView(after),
    context,
  })
  caller.log.info({ endpointId: after.id, rootKeyId: principal.rootKeyId }, 'webhook endpoint secret rotated')
  return fresh
}
