import { ApiError, invalid } from '../../../shared/errors/errors.js'
import type { MeterExport, MeterProvider } from '../../../shared/meter-export.js'
import type { SecretBox } from '../../../shared/secrets/secret-box.js'
import type { UsageMeasure } from '../../../shared/usage-threshold.js'
import type { WebhookEventType } from '../../../shared/webhook.js'

/** A meter export as webhooks.createEndpoint takes it: the credential as it is, sealed before it is kept. */
export interface ExportInput {
  provider: MeterProvider
  meter: string
  measure?: UsageMeasure | undefined
  customerField?: string | undefined
  credential: string
}

/** What webhooks.updateEndpoint changes of an export: each field given replaces its own (not the provider). */
export interface ExportChange {
  meter?: string | undefined
  measure?: UsageMeasure | undefined
  customerField?: string | undefined
  credential?: string | undefined
}

/** The one event type a meter export takes: each hour's usage, once the hour is complete. */
export const EXPORT_EVENT_TYPES: readonly WebhookEventType[] = ['usage.hourly']

/**
 * A new export's settings, its credential sealed for the endpoint `endpointId`: 412 without ENCRYPTION_KEYS (nothing
 * can be kept then), 400 for a Stripe or Lago export that does not say which identity meta field names the customer.
 */
export function newExport(input: ExportInput, secrets: SecretBox | undefined, endpointId: string): MeterExport {
  const box = requireSecrets(secrets)
  const customerField = input.customerField
  if (customerField === undefined && input.provider !== 'openmeter')
    throw invalid(
      'export.customerField',
      `is needed for ${input.provider}: the identity meta field holding its ${customerNoun(input.provider)}`,
    )
  return {
    provider: input.provider,
    meter: input.meter,
    measure: input.measure ?? 'billable',
    ...(customerField === undefined ? {} : { customerField }),
    credential: box.seal(input.credential, endpointId),
  }
}

/** `before` with `change` made (a new credential sealed anew). */
export function changedExport(
  before: MeterExport,
  change: ExportChange,
  secrets: SecretBox | undefined,
  endpointId: string,
): MeterExport {
  return {
    ...before,
    ...(change.meter === undefined ? {} : { meter: change.meter }),
    ...(change.measure === undefined ? {} : { measure: change.measure }),
    ...(change.customerField === undefined ? {} : { customerField: change.customerField }),
    ...(change.credential === undefined
      ? {}
      : { credential: requireSecrets(secrets).seal(change.credential, endpointId) }),
  }
}

/**
 * A meter export's scope: some apis (each export is of an api's usage, or a few apis' summed), and usage.hourly as
 * its only type (400 otherwise).
 */
export function checkExportScope(scope: { eventTypes: readonly WebhookEventType[]; apiIds: readonly string[] }): void {
  if (scope.apiIds.length === 0) throw invalid('apiIds', 'a meter export is of some apis: name them')
  if (scope.eventTypes.length !== 1 || scope.eventTypes[0] !== 'usage.hourly')
    throw invalid('eventTypes', 'a meter export takes usage.hourly only: leave eventTypes out')
}

function requireSecrets(secrets: SecretBox | undefined): SecretBox {
  if (secrets !== undefined) return secrets
  throw new ApiError(
    'PRECONDITION_FAILED',
    "a meter export's credential is kept sealed, and this control plane has no key to seal it with: set ENCRYPTION_KEYS",
  )
}

const customerNoun = (provider: MeterProvider) =>
  provider === 'stripe' ? 'Stripe customer id (cus_…)' : "Lago subscription's external id"
