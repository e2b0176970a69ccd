import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { CreatedAtField } from '../wire/fields.js'
import { CREDITS_LOW_THRESHOLD_DOC } from './wire/key-schemas.js'
import { whoami } from './whoami.js'

const WhoamiBody = Type.Object(
  {
    key: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'A key itself (as keys.createKey returned it once), to find its record',
      examples: [WIRE_EXAMPLES.key],
    }),
  },
  { additionalProperties: false, examples: [{ key: WIRE_EXAMPLES.key }] },
)
const WhoamiResponse = Type.Object({
  id: Type.String({ description: "The key's id" }),
  name: Type.Optional(Type.String({ description: 'Its name' })),
  meta: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Its meta' })),
  remaining: Type.Optional(Type.Integer({ description: 'Credits left (keys with credits only)' })),
  creditsLowThreshold: Type.Optional(Type.Integer({ description: `${CREDITS_LOW_THRESHOLD_DOC}, when set` })),
  createdAt: CreatedAtField(),
  enabled: Type.Boolean({ description: 'Whether it verifies' }),
  environment: Type.Optional(Type.String({ description: 'Its environment label' })),
  identity: Type.Optional(
    Type.Object(
      {
        id: Type.Optional(Type.String({ description: "The identity's id, when an identity has this externalId" })),
        externalId: Type.String({ description: 'Who it belongs to' }),
      },
      { description: 'Its owner, when it has one' },
    ),
  ),
})

/** v1's keys.whoami, for support tooling: a key the root key may not read is a 403. */
export const whoamiV1 = v1Route({
  operation: 'keys.whoami',
  method: 'POST',
  doc: { summary: 'Find the key record of a key', tag: 'keys' },
  input: WhoamiBody,
  answer: WhoamiResponse,
  handle: async ({ key }, caller, deps) => {
    const { record, context } = await whoami(deps, caller, key)
    const externalId = record.ownerId
    return {
      id: record.id,
      name: record.name,
      meta: record.meta,
      remaining: record.remaining,
      creditsLowThreshold: record.creditsLowThreshold,
      createdAt: record.createdAt,
      enabled: record.enabled,
      environment: record.environment,
      // The identity record bound through the externalId (Unkey's {id, externalId}); its externalId alone if none.
      identity:
        externalId === undefined
          ? undefined
          : context.identity
            ? { id: context.identity.id, externalId }
            : { externalId },
    }
  },
})
