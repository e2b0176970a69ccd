import type { WebhookPolicy } from '../../shared/config/settings.js'

export type { WebhookPolicy }

/** The policy when no option says otherwise (the option table's defaults, shared/config/options.ts). */
export const DEFAULT_WEBHOOK_POLICY: WebhookPolicy = {
  allowPrivateAddresses: false,
  timeoutMs: 10_000,
  retryWindowMs: 24 * 3_600_000,
  retryMaxDelayMs: 3_600_000,
  expiringLeadMs: 7 * 24 * 3_600_000,
}
