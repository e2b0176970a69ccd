import type { UsageMeasure } from './usage-threshold.js'

/** The billing systems a meter export sends usage to. */
export const METER_PROVIDERS = ['stripe', 'lago', 'openmeter'] as const
export type MeterProvider = (typeof METER_PROVIDERS)[number]

/**
 * What makes a webhook endpoint a meter export (control-plane/webhooks/exports/): instead of signed events, each
 * period's usage of the endpoint's apis goes to a billing provider's usage API, per customer, through the same durable
 * delivery (retries, dead letters, the delivery log). Its URL is the provider's base URL.
 */
export interface MeterExport {
  provider: MeterProvider
  /** Stripe's meter event name, Lago's billable metric code, OpenMeter's event type. */
  meter: string
  /** What is sent as the value: billable verifications (each api's billableOutcomes) or credits spent. */
  measure: UsageMeasure
  /**
   * The identity meta field holding the customer at the provider: a Stripe customer id (`cus_…`), a Lago
   * subscription's external id; absent for OpenMeter: the identity's externalId is the subject.
   */
  customerField?: string
  /** The provider's credential, sealed (shared/secrets/secret-box.ts): never stored, shown or logged as it is. */
  credential: string
}
