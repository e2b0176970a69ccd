import { Type, type Static, type TSchema } from 'typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { KeygateServer } from './build-server.js'

/** v2's `meta`: the request id (also the X-Request-Id header). */
export const V2Meta = Type.Object(
  { requestId: Type.String({ description: "This request's id (also the X-Request-Id header)" }) },
  { additionalProperties: false, description: 'About the request' },
)

/** v2's list pages: the SDK asks for the next page while a non-empty cursor comes back. */
export const V2Pagination = Type.Object(
  {
    cursor: Type.Optional(Type.String({ description: 'Where the next page starts; absent on the last page' })),
    hasMore: Type.Boolean({ description: 'Whether another page follows' }),
  },
  { description: 'Where this page ends' },
)

/** `pagination` for a page that ended at `cursor` (none: the last page). */
export function v2Pagination(cursor: string | undefined): Static<typeof V2Pagination> {
  return cursor === undefined ? { hasMore: false } : { cursor, hasMore: true }
}

/** `data` as the API reference shows it: described, unless its schema says more already. */
const described = <Data extends TSchema>(data: Data): Data =>
  'description' in data ? data : { ...data, description: 'What the operation answers' }

/** Every v2 success: `{meta: {requestId}, data}` (lists add `pagination`). */
export function V2Envelope<Data extends TSchema>(data: Data) {
  return Type.Object({ meta: V2Meta, data: described(data) })
}
export function V2PagedEnvelope<Data extends TSchema>(data: Data) {
  return Type.Object({ meta: V2Meta, data: described(data), pagination: Type.Optional(V2Pagination) })
}

/** What a v2 handler answers: `data`, and for a list its `pagination`. */
export interface V2Answer<Data> {
  data: Data
  pagination?: Static<typeof V2Pagination>
}

type Handler<Body extends TSchema, Data extends TSchema> = (
  request: FastifyRequest & { body: Static<Body> },
  reply: FastifyReply,
) => Promise<V2Answer<Static<Data>>>

/**
 * Registers `POST /v2/<operation>`: every v2 operation is a POST with a JSON body, answered in the envelope.
 * Errors thrown by the handler are rendered as v2's problem bodies by the one error handler (problem-body.ts).
 */
export function registerV2<Body extends TSchema, Data extends TSchema>(
  app: KeygateServer,
  operation: string,
  schema: { body: Body; data: Data; paged?: boolean },
  handler: Handler<Body, Data>,
): void {
  const response: TSchema = schema.paged ? V2PagedEnvelope(schema.data) : V2Envelope(schema.data)
  // Typed by `handler`'s signature: Fastify's provider cannot follow a schema built from a generic one.
  app.post(
    `/v2/${operation}`,
    { schema: { body: schema.body, response: { 200: response } } },
    async (request, reply) => {
      const answer = await handler(request as unknown as FastifyRequest & { body: Static<Body> }, reply)
      return { meta: { requestId: request.id }, ...answer }
    },
  )
}
