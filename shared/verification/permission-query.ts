import { Type } from 'typebox'

/**
 * verifyKey's `authorization.permissions`: a permission name, or {and:[…]} / {or:[…]} of queries, nested.
 * Evaluated against the key's own permissions; pure and allocation-free.
 */
export type PermissionQuery = string | { and: PermissionQuery[] } | { or: PermissionQuery[] }

export const PERMISSION_NAME = /^[A-Za-z0-9_.:*\-/]{1,256}$/
export const PERMISSION_QUERY_LIMITS = { depth: 8, terms: 100 } as const

/**
 * The query's shape as the API reference shows it. Not a validator: queryProblem checks queries, with the
 * depth and size limits a recursive schema could not express.
 */
export const PermissionQueryShape = Type.Cyclic(
  {
    PermissionQuery: Type.Union(
      [
        Type.String({ pattern: PERMISSION_NAME.source, description: 'A permission name: the key must have it' }),
        Type.Object(
          {
            and: Type.Array(Type.Ref('PermissionQuery'), {
              minItems: 1,
              description: 'Every one of these queries must hold',
            }),
          },
          { additionalProperties: false },
        ),
        Type.Object(
          {
            or: Type.Array(Type.Ref('PermissionQuery'), {
              minItems: 1,
              description: 'At least one of these queries must hold',
            }),
          },
          { additionalProperties: false },
        ),
      ],
      {
        description: `A permission name, or {and: […]} / {or: […]} of queries, nested up to ${PERMISSION_QUERY_LIMITS.depth} levels, at most ${PERMISSION_QUERY_LIMITS.terms} names in all`,
      },
    ),
  },
  'PermissionQuery',
)

export function satisfies(granted: readonly string[] | undefined, query: PermissionQuery): boolean {
  if (typeof query === 'string') return granted?.includes(query) ?? false
  if ('and' in query) return query.and.every((part) => satisfies(granted, part))
  return query.or.some((part) => satisfies(granted, part))
}

/** Why a query from a client is unacceptable, or undefined when it is well formed and within the limits. */
export function queryProblem(query: unknown): string | undefined {
  let terms = 0
  const walk = (node: unknown, depth: number): string | undefined => {
    if (depth > PERMISSION_QUERY_LIMITS.depth) return `nests deeper than ${PERMISSION_QUERY_LIMITS.depth} levels`
    if (typeof node === 'string') {
      terms++
      if (terms > PERMISSION_QUERY_LIMITS.terms) return `has more than ${PERMISSION_QUERY_LIMITS.terms} permissions`
      return PERMISSION_NAME.test(node) ? undefined : `${JSON.stringify(node.slice(0, 40))} is not a permission name`
    }
    if (typeof node !== 'object' || node === null || Array.isArray(node))
      return 'must be a permission name, {and:[…]} or {or:[…]}'
    const keys = Object.keys(node)
    const list = (node as Record<string, unknown>)[keys[0] ?? '']
    if (keys.length !== 1 || (keys[0] !== 'and' && keys[0] !== 'or') || !Array.isArray(list) || list.length === 0) {
      return 'must be a permission name, {and:[…]} or {or:[…]} with at least one item'
    }
    for (const part of list) {
      const problem = walk(part, depth + 1)
      if (problem) return problem
    }
    return undefined
  }
  return walk(query, 1)
}
