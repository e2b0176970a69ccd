import { Type, type Static, type TSchema } from 'typebox'

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

/**
 * A v2 answer in its envelope: `meta` with the request's id, then what the call answered (`data`, and a list's
 * `pagination`; nothing else of it). Every v2 answer but the fast path's (fast-route.ts, which writes the same bytes
 * itself) is made here, by the one route primitive (route.ts).
 */
export function inV2Envelope<Data>(requestId: string, answer: V2Answer<Data>): V2Enveloped<Data> {
  const { data, pagination } = answer
  return pagination === undefined ? { meta: { requestId }, data } : { meta: { requestId }, data, pagination }
}

/** A v2 answer as the wire sends it. */
export interface V2Enveloped<Data> extends V2Answer<Data> {
  meta: { requestId: string }
}
