import type { WebhookEndpoint, WebhookEventType } from '../../../shared/webhook.js'

/**
 * A webhook endpoint as the API and the audit log show it: never a secret. (A type, not an interface, so that the
 * audit log takes it as a plain object.)
 */
export type EndpointView = {
  endpointId: string
  url: string
  description?: string
  eventTypes: WebhookEventType[]
  /** Empty: unscoped, every api. */
  apiIds: string[]
  enabled: boolean
  createdAt: number
  updatedAt?: number
  /** A meter export's settings, without its credential. */
  export?: { provider: string; meter: string; measure: string; customerField?: string }
}

export function endpointView(endpoint: WebhookEndpoint): EndpointView {
  const { id, url, description, eventTypes, apiIds, enabled, createdAt, updatedAt } = endpoint
  const exported = endpoint.export
  return {
    endpointId: id,
    url,
    ...(description === undefined ? {} : { description }),
    eventTypes,
    apiIds: apiIds ?? [],
    enabled,
    createdAt,
    ...(updatedAt === undefined ? {} : { updatedAt }),
    ...(exported === undefined
      ? {}
      : {
          export: {
            provider: exported.provider,
            meter: exported.meter,
            measure: exported.measure,
            ...(exported.customerField === undefined ? {} : { customerField: exported.customerField }),
          },
        }),
  }
}
