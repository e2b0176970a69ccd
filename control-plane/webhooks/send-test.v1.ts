import { Type } from 'typebox'
import { StringEnum } from '../../shared/http/schema-docs.js'
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TESTS_KEPT } from '../../shared/webhook.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { EndpointIdField } from './wire/webhook-schemas.js'
import { DEFAULT_TEST_TYPE, sendTest } from './send-test.js'

/** webhooks.sendTest: an example event to one endpoint, now, answered with what the endpoint did. */
export const sendTestV1 = v1Route({
  operation: 'webhooks.sendTest',
  method: 'POST',
  doc: {
    summary: 'Send an endpoint a signed example event now, and answer what it did',
    description: `Needs \`webhook.<endpointId|*>.send_test\`. The event is example data of the type (ids such as \`key_example\`, never a real record), its \`webhook-id\` \`msg_test_…\`, signed and sent as real deliveries are, to the endpoint enabled or not. It is sent once, not retried, queued or kept (so not replayable); the attempt is in the delivery log, marked \`test\` (the last ${WEBHOOK_TESTS_KEPT} tests are kept apart from the deliveries' attempts, which they never push out). The answer waits for the endpoint's, at most WEBHOOK_TIMEOUT_MS, and says what it answered: an endpoint that fails (a 3xx included: redirects are not followed) is still a 200, with \`delivered: false\`. One test at a time per endpoint on a control plane: another while one is under way is 429, \`Retry-After\` the timeout.`,
    tag: 'webhooks',
  },
  input: Type.Object(
    {
      endpointId: EndpointIdField('The endpoint to send the example to'),
      eventType: Type.Optional(
        StringEnum(WEBHOOK_EVENT_TYPES, {
          description: `The example's type (default ${DEFAULT_TEST_TYPE}, or the endpoint's first type when it does not take ${DEFAULT_TEST_TYPE})`,
        }),
      ),
    },
    {
      additionalProperties: false,
      examples: [{ endpointId: WIRE_EXAMPLES.webhookEndpointId, eventType: DEFAULT_TEST_TYPE }],
    },
  ),
  answer: Type.Object({
    delivered: Type.Boolean({ description: 'Whether the endpoint answered 2xx' }),
    eventId: Type.String({ description: "The example's id, sent as `webhook-id` (`msg_test_…`)" }),
    eventType: Type.String({ description: "The example's type" }),
    deliveryId: Type.String({ description: 'The attempt in the delivery log' }),
    at: Type.Number({ description: 'When it was sent, unix milliseconds' }),
    status: Type.Optional(Type.Integer({ description: "The endpoint's HTTP status; absent when no answer came" })),
    error: Type.Optional(Type.String({ description: 'Why it failed: `timeout`, `refused: …`, `HTTP 500`…' })),
    latencyMs: Type.Integer({ description: 'How long the endpoint took, ms' }),
    responseSnippet: Type.Optional(Type.String({ description: "The first 1 KiB of the endpoint's answer" })),
  }),
  handle: async (body, caller, deps) => sendTest(deps, caller, body),
})
