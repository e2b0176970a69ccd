import { Type, type TSchema } from 'typebox'

/**
 * A string that is one of `values`, as `{type: 'string', enum}`: the API reference lists the values, and a
 * refused value is answered with them (validation.ts), where a union of literals would show as "anyOf".
 */
export const StringEnum = <const V extends readonly string[]>(values: V, options: { description?: string } = {}) =>
  Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...options })

/** The key under which a schema carries the shape the API reference shows for it (see documentedAs). */
export const DOCUMENTED_AS = 'x-keygate-documented-as'

/**
 * A value the validator takes as it is and code checks (a recursive query, whose depth a validator could not
 * bound without recursing as deep as the input): the API reference shows `shape` in its place. The validator
 * ignores the key (unknown keywords are not checked); control-plane/openapi swaps the shape in.
 */
export const documentedAs = <S extends TSchema>(schema: S, shape: TSchema): S => ({ ...schema, [DOCUMENTED_AS]: shape })
