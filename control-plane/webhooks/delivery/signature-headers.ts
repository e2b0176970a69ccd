import { Webhook } from 'standardwebhooks'
import type { WebhookSecret } from '../../../shared/webhook.js'

/**
 * The Standard Webhooks headers of one request: `webhook-id` (the event's id, the same on every attempt, so receivers
 * deduplicate), `webhook-timestamp` (when this attempt is sent, unix seconds: receivers refuse old ones) and
 * `webhook-signature`, one `v1,<base64 HMAC-SHA256>` per secret still valid at `now`, space-separated: during a
 * rotation's grace period a receiver holding either secret verifies. Signed by the `standardwebhooks` library, so that
 * receivers using it or Svix's libraries verify unchanged.
 */
export function signatureHeaders(
  secrets: readonly WebhookSecret[],
  eventId: string,
  now: number,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const at = new Date(now)
  const signatures = secrets
    .filter((secret) => secret.expiresAt === undefined || secret.expiresAt > now)
    .map((secret) => new Webhook(secret.secret).sign(eventId, at, body))
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(now / 1000)),
    'webhook-signature': signatures.join(' '),
  }
}
