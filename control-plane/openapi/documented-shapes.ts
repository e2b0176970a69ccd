import { DOCUMENTED_AS } from '../../shared/http/schema-docs.js'

/**
 * A request schema as the API reference shows it: every value the validator takes as is but code checks
 * (shared/http/schema-docs.ts documentedAs) gets the shape it was marked with, keeping its description and
 * examples. A copy: the route's own schema, which Fastify validates with, is left as it is.
 */
export function withDocumentedShapes(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withDocumentedShapes)
  if (typeof schema !== 'object' || schema === null) return schema
  const { [DOCUMENTED_AS]: shape, ...rest } = schema as Record<string, unknown>
  if (shape !== undefined) {
    const { description, examples } = rest
    return {
      ...(description === undefined ? {} : { description }),
      ...(examples === undefined ? {} : { examples }),
      allOf: [shape],
    }
  }
  // Examples are values, not schemas: copied as they are.
  return Object.fromEntries(
    Object.entries(rest).map(([key, value]) => [key, key === 'examples' ? value : withDocumentedShapes(value)]),
  )
}
