import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { EndpointIdField, SecretField } from './wire/webhook-schemas.js'
import { MAX_ROTATION_GRACE_SECONDS, rotateSecret } from './rotate-secret.js'

const DEFAULT_GRACE_SECONDS = 86_400

const RotateSecretBody = Type.Object(
  {
    endpointId: EndpointIdField('The endpoint whose secret to replace'),
    graceSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_ROTATION_GRACE_SECONDS,
        default: DEFAULT_GRACE_SECONDS,
        description:
          'How long the replaced secrets go on signing beside the new one, seconds (0–604800, default 86400): 0 drops them now',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ endpointId: WIRE_EXAMPLES.webhookEndpointId, graceSeconds: 3600 }],
  },
)

/** webhooks.rotateSecret: Keygate's own, in v1 style. */
export const rotateSecretV1 = v1Route({
  operation: 'webhooks.rotateSecret',
  method: 'POST',
  doc: {
    summary: "Replace a webhook endpoint's signing secret; the new one is shown this once",
    description:
      "Needs `update_endpoint`. Deliveries are signed with the new secret at once and with the replaced ones too until the grace is over (each signature in `webhook-signature`), so a receiver moves to the new secret without refusing a delivery. A rotation never lengthens an older secret's grace. Made over the endpoint as it is: when another change of it lands first, the rotation is made again over that one, and 409 if they keep landing.",
    tag: 'webhooks',
    errors: [
      'BAD_REQUEST',
      'UNAUTHORIZED',
      'INSUFFICIENT_PERMISSIONS',
      'NOT_FOUND',
      'CONFLICT',
      'RATE_LIMITED',
      'INTERNAL_SERVER_ERROR',
      'UNAVAILABLE',
    ],
  },
  input: RotateSecretBody,
  answer: Type.Object({ secret: SecretField() }),
  handle: async ({ endpointId, graceSeconds = DEFAULT_GRACE_SECONDS }, caller, deps) => ({
    secret: (await rotateSecret(deps, caller, { endpointId, graceSeconds })).secret,
  }),
})
