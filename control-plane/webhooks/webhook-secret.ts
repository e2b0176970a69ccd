import { randomBytes } from 'node:crypto'
import type { WebhookSecret } from '../../shared/webhook.js'

const SECRET_PREFIX = 'whsec_'
const SECRET_BYTES = 32

/**
 * A new signing secret, made at `now`: `whsec_` and base64 of 32 random bytes, the Standard Webhooks format that
 * receivers' libraries (standardwebhooks, svix) take as it is. It is in an answer once (createEndpoint,
 * rotateSecret), never in a listing, an audit entry or a log line.
 */
export function newWebhookSecret(now: number): WebhookSecret {
  return { secret: `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`, createdAt: now }
}

/**
 * An endpoint's secrets once `fresh` replaces the current one: `fresh` first (it signs from now on), the others
 * signing beside it until `now + graceMs` at the latest, so that receivers have the grace to take the new one. A
 * rotation never lengthens an older secret's grace, it may shorten it: a rotation with no grace (a secret that leaked)
 * drops every other secret now. Secrets whose time is up are dropped.
 */
export function rotatedSecrets(
  secrets: readonly WebhookSecret[],
  fresh: WebhookSecret,
  now: number,
  graceMs: number,
): WebhookSecret[] {
  const until = now + graceMs
  const kept = secrets
    .map((secret) => ({ ...secret, expiresAt: Math.min(secret.expiresAt ?? until, until) }))
    .filter((secret) => secret.expiresAt > now)
  return [fresh, ...kept]
}
