interface Schema {
  examples?: unknown[]
  type?: string
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  minItems?: number
}

/**
 * A value a schema takes, made of its own examples: the schema's first example, or for an object one with each
 * required field's (optional ones left out), or for an array one item (none when it may be empty). Undefined when a
 * required field has none: an example is never made up.
 */
function exampleOf(schema: Schema): unknown {
  if (schema.examples?.[0] !== undefined) return schema.examples[0]
  if (schema.type === 'object' && schema.properties) {
    const entries = (schema.required ?? []).map((name) => {
      const property = schema.properties?.[name]
      return [name, property === undefined ? undefined : exampleOf(property)] as const
    })
    return entries.some(([, value]) => value === undefined) ? undefined : Object.fromEntries(entries)
  }
  if (schema.type === 'array' && schema.items) {
    if ((schema.minItems ?? 0) === 0) return []
    const item = exampleOf(schema.items)
    return item === undefined ? undefined : [item]
  }
  return undefined
}

/**
 * A request body schema with an example of the whole body, for "Try it out" (Swagger UI fills the editor with it)
 * and the document's `example`: a route's own wins; otherwise one made of its fields' examples, so that a route
 * whose required fields have examples needs nothing more (v2's bodies, mostly).
 */
export function withBodyExample(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body
  const schema = body as Schema
  if (schema.examples !== undefined) return body
  const example = exampleOf(schema)
  return example === undefined ? body : { ...schema, examples: [example] }
}
