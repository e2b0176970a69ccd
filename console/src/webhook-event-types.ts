/**
 * The event types a webhook endpoint can subscribe to, in the order the form lists them: shared/webhook.ts's
 * WEBHOOK_EVENT_TYPES, written out again because the console imports no server code (it is a client of the wire
 * API). test/unit/console-endpoint-form.test.ts holds the two lists equal.
 */
export const EVENT_TYPES = [
  'key.created',
  'key.updated',
  'key.deleted',
  'key.rerolled',
  'key.expiring',
  'key.expired',
  'key.credits.low',
  'key.credits.exhausted',
  'key.leaked',
  'identity.created',
  'identity.updated',
  'identity.deleted',
  'rootKey.created',
  'rootKey.revoked',
  'rootKey.rolled',
] as const
