/** What operators decide about webhooks (KEYGATE_WEBHOOK_* options), given to the operations and the worker. */
export interface WebhookPolicy {
  /**
   * Whether endpoints may be on loopback, private, link-local and other non-public addresses (self-hosters who
   * deliver inside their own network). Off by default: a root key must not be able to make the control plane call
   * into the network it runs in.
   */
  allowPrivateAddresses: boolean
  /** How long a request to an endpoint may take, ms. */
  timeoutMs: number
  /** How long retries go on after an event was queued before it goes to the dead letters, ms. */
  retryWindowMs: number
  /** How long before a key's expiry `key.expiring` is sent, ms. */
  expiringLeadMs: number
}

export const DEFAULT_WEBHOOK_POLICY: WebhookPolicy = {
  allowPrivateAddresses: false,
  timeoutMs: 10_000,
  retryWindowMs: 24 * 3_600_000,
  expiringLeadMs: 7 * 24 * 3_600_000,
}
