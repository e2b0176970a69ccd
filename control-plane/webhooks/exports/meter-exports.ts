import type { IdentityRecord } from '../../../shared/identity.js'
import type { MeterExport } from '../../../shared/meter-export.js'
import type { SecretBox } from '../../../shared/secrets/secret-box.js'
import { webhookDeliveryId, type WebhookEndpoint, type WebhookEvent } from '../../../shared/webhook.js'
import type { UsageEventData } from '../usage/usage-events.js'
import { METER_OLDEST_MS, METER_WINDOWS_MS, meterRequest, type MeterRequest } from './meter-requests.js'

/**
 * What the delivery worker does with a usage event due at a meter export: send the request built here; complete it
 * with nothing sent (no customer to bill: a key without an identity; nothing to bill: a value of 0); or dead-letter it
 * for an operator, saying why (past the provider's window, a customer the identity does not name, a credential that
 * does not open) — each a state a retry would not change.
 */
export type ExportPlan = { send: MeterRequest } | { skip: string } | { hold: string }

export interface MeterExportsDeps {
  /** What opens the exports' credentials; undefined: ENCRYPTION_KEYS is not set (none can be opened). */
  secrets: SecretBox | undefined
  /** The identity of an externalId, as it is now (its meta names the customer at the provider). */
  identityOf(externalId: string): Promise<IdentityRecord | null>
}

/**
 * Meter exports' deliveries: a webhook endpoint with `export` receives `usage.hourly` events as its provider's usage
 * requests (meter-requests.ts) rather than as signed events.
 *
 * A usage event is sent only within its provider's deduplication window of when it was made (METER_WINDOWS_MS):
 * within it, any number of sends leave the period counted once at the provider, since each carries the delivery's id
 * (the event's and the export's); past it, one more could count it twice, so the delivery is held as a dead letter
 * for an operator to decide on (docs/billing.md). The window is counted from the event's making, which every earlier
 * send came after: a retry or a replay never passes it unseen.
 */
export class MeterExports {
  constructor(private readonly deps: MeterExportsDeps) {}

  async plan(
    endpoint: WebhookEndpoint & { export: MeterExport },
    event: WebhookEvent,
    now: number,
  ): Promise<ExportPlan> {
    const target = endpoint.export
    if (event.type !== 'usage.hourly') return { skip: `a meter export sends usage.hourly only, not ${event.type}` }
    const data = event.data as unknown as UsageEventData
    // What is never sent is skipped first, however old: a dead letter asks an operator about a period at the provider.
    if (data.externalId === undefined) return { skip: 'a key without an identity: no customer to bill' }
    const value = target.measure === 'credits' ? data.spentCredits : data.billable
    if (value === 0) return { skip: 'nothing to bill in the period' }
    const madeAt = event.madeAt ?? event.at
    if (now - madeAt > METER_WINDOWS_MS[target.provider])
      return {
        hold:
          `made ${hoursAgo(now - madeAt)} ago, past ${target.provider}'s deduplication window: sent again it could be ` +
          'counted twice. Check the period at the provider before sending it by hand (docs/billing.md)',
      }
    if (now - data.period.start > METER_OLDEST_MS[target.provider])
      return { hold: `its period is further back than ${target.provider} takes usage (35 days)` }
    const customer = await this.customerOf(target, data.externalId)
    if (typeof customer !== 'string') return customer
    if (this.deps.secrets === undefined)
      return { hold: 'the credential cannot be opened: ENCRYPTION_KEYS is not set on this control plane' }
    let credential: string
    try {
      credential = this.deps.secrets.open(target.credential, endpoint.id)
    } catch (err) {
      return { hold: `the credential cannot be opened: ${(err as Error).message}` }
    }
    const request = meterRequest(
      { provider: target.provider, baseUrl: endpoint.url, meter: target.meter, credential },
      // The delivery's id, not the event's: exports of the same apis share an event, and two of them at one provider
      // account (two meters) would each be taken for a duplicate of the other.
      {
        id: webhookDeliveryId(event.id, endpoint.id),
        customer,
        value,
        periodStart: data.period.start,
        apiIds: data.apiIds,
      },
    )
    return { send: request }
  }

  /** The customer at the provider: the identity's meta field the export names, or (none named) its externalId. */
  private async customerOf(target: MeterExport, externalId: string): Promise<string | { hold: string }> {
    if (target.customerField === undefined) return externalId
    const identity = await this.deps.identityOf(externalId)
    const value = identity?.meta?.[target.customerField]
    if (typeof value === 'string' && value !== '') return value
    return {
      hold:
        `the identity ${JSON.stringify(externalId)} has no meta field ${JSON.stringify(target.customerField)} naming ` +
        `its ${target.provider} customer: set it, then replay`,
    }
  }
}

const hoursAgo = (ms: number) => `${Math.floor(ms / 3_600_000)} h`
