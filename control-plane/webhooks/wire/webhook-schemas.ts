import { Type } from 'typebox'
import { StringEnum } from '../../../shared/http/schema-docs.js'
import { MAX_ENDPOINT_APIS, WEBHOOK_EVENT_TYPES } from '../../../shared/webhook.js'
import { METER_PROVIDERS } from '../../../shared/meter-export.js'
import { USAGE_MEASURES } from '../../../shared/usage-threshold.js'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'
import { MAX_ENDPOINT_URL_LENGTH } from '../delivery/address-policy.js'
import { LIMITS } from '../../input-limits.js'

/** The wire shapes the webhooks.* calls share. An endpoint's secrets are in no shape here but the two answers below. */

const DESCRIPTION_LENGTH = 1024

export const EndpointIdField = (description = 'The endpoint: the `endpointId` that webhooks.createEndpoint returned') =>
  Type.String({
    minLength: 1,
    maxLength: LIMITS.idLength,
    description,
    examples: [WIRE_EXAMPLES.webhookEndpointId],
  })

export const EndpointUrlField = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: MAX_ENDPOINT_URL_LENGTH,
    description: `${description}: http or https, no user:password@, a host with public addresses only (unless the operator allows private ones)`,
    examples: [WIRE_EXAMPLES.webhookUrl],
  })

export const EndpointDescription = (description: string) =>
  Type.String({ minLength: 1, maxLength: DESCRIPTION_LENGTH, description, examples: ['billing service'] })

export const EventTypes = (description: string) =>
  Type.Array(StringEnum(WEBHOOK_EVENT_TYPES, { description: 'An event type' }), {
    maxItems: WEBHOOK_EVENT_TYPES.length,
    description: `${description}; empty: every type but usage.* (sent only to endpoints that name them)`,
    examples: [['key.created', 'key.deleted']],
  })

export const EndpointApiIds = (description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.idLength, description: 'An api id' }), {
    maxItems: MAX_ENDPOINT_APIS,
    description:
      `${description}: it is sent only events about them (key.*; usage.* summed over them), never those about no ` +
      `api (identity.*, rootKey.*); empty: every api, and the events about no api. At most ${MAX_ENDPOINT_APIS}; ` +
      'each must exist, and the root key read what it is sent of each ' +
      '(`api.<apiId>.read_key`; usage.*: `api.<apiId>.read_analytics`)',
    examples: [[WIRE_EXAMPLES.apiId]],
  })

const MeterField = () =>
  Type.String({
    minLength: 1,
    maxLength: 100,
    description: "Stripe's meter event name, Lago's billable metric code, or OpenMeter's event type",
    examples: ['api_calls'],
  })
const MeasureField = () =>
  StringEnum(USAGE_MEASURES, {
    description:
      "What is sent as the value: billable verifications (each api's billableOutcomes; default) or credits spent",
  })
const CustomerField = () =>
  Type.String({
    minLength: 1,
    maxLength: 100,
    description:
      "The identity meta field holding the customer at the provider: Stripe's customer id (cus_…), a Lago subscription's external id; OpenMeter: left out, the externalId is the subject",
    examples: ['stripeCustomerId'],
  })
const CredentialField = (description: string) =>
  Type.String({ minLength: 1, maxLength: 1024, description: `${description}: kept sealed, never shown again` })

/** webhooks.createEndpoint's `export`: a meter export instead of signed events. */
export const ExportInputField = () =>
  Type.Object(
    {
      provider: StringEnum(METER_PROVIDERS, { description: 'The billing system' }),
      meter: MeterField(),
      measure: Type.Optional(MeasureField()),
      customerField: Type.Optional(CustomerField()),
      credential: CredentialField("Stripe's secret key, Lago's API key or OpenMeter's token"),
    },
    {
      additionalProperties: false,
      description:
        "Keygate's: send each hour's usage of the endpoint's apis to a billing provider, per customer, instead of signed events (docs/billing.md#meter-exports); needs ENCRYPTION_KEYS",
    },
  )

/** webhooks.updateEndpoint's `export`: each field given replaces its own. */
export const ExportChangeField = () =>
  Type.Object(
    {
      meter: Type.Optional(MeterField()),
      measure: Type.Optional(MeasureField()),
      customerField: Type.Optional(CustomerField()),
      credential: Type.Optional(CredentialField('A new credential')),
    },
    { additionalProperties: false, description: "A meter export's settings to change (not its provider)" },
  )

/** An endpoint as the API shows it: this schema is the allow-list that keeps its secrets off the wire. */
export const EndpointResponse = Type.Object({
  endpointId: Type.String({ description: 'The endpoint (whep_…)' }),
  url: Type.String({ description: 'Where events are sent' }),
  description: Type.Optional(Type.String({ description: 'What it is, for people' })),
  eventTypes: Type.Array(Type.String(), {
    description: 'The event types it receives; empty: every type but usage.* (sent only to endpoints that name them)',
  }),
  apiIds: Type.Array(Type.String(), {
    description:
      'The apis it is scoped to: it receives only events about them; empty: every api, and the events about none',
  }),
  enabled: Type.Boolean({ description: 'Whether events are sent to it' }),
  createdAt: Type.Number({ description: 'When it was created, unix milliseconds' }),
  updatedAt: Type.Optional(Type.Number({ description: 'When it last changed, unix milliseconds' })),
  export: Type.Optional(
    Type.Object(
      {
        provider: Type.String({ description: 'The billing system' }),
        meter: Type.String({ description: 'The meter, metric code or event type' }),
        measure: Type.String({ description: 'billable or credits' }),
        customerField: Type.Optional(Type.String({ description: 'The identity meta field naming the customer' })),
      },
      { description: 'Set for a meter export: where usage goes (its credential is never shown)' },
    ),
  ),
})

export const SecretField = () =>
  Type.String({
    description:
      'The signing secret (`whsec_` and base64), shown this once: give it to the receiver, which checks the `webhook-signature` of each delivery with it (Standard Webhooks)',
  })
