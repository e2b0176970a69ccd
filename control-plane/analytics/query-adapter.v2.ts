import { Type } from 'typebox'
import { v2Route, type ManagementRoute } from '../http/management-route.js'
import { runAnalyticsQuery } from './query/run-query.js'
import type { QueryDataset } from './query/query-rules.js'

/**
 * A v2 analytics call, as Unkey's are: `{query}` in, the rows the ClickHouse SQL answers out, each an object of its
 * columns (`data: []` for none). `resource`: the permission resource that scopes it.
 */
export function analyticsQueryRoute(
  operation: string,
  dataset: QueryDataset,
  doc: { summary: string; description: string },
  example: string,
): ManagementRoute {
  return v2Route({
    operation,
    doc: {
      ...doc,
      tag: 'v2 analytics',
      errors: [
        'BAD_REQUEST',
        'UNAUTHORIZED',
        'INSUFFICIENT_PERMISSIONS',
        'PRECONDITION_FAILED',
        'UNPROCESSABLE',
        'RATE_LIMITED',
        'INTERNAL_SERVER_ERROR',
        'UNAVAILABLE',
      ],
    },
    body: Type.Object(
      {
        query: Type.String({
          description:
            'One ClickHouse SELECT (up to 16 KiB) over the tables of this call: CTEs, subqueries, joins, UNION and window functions allowed; SETTINGS, FORMAT and functions outside the allowed list are not',
          examples: [example],
        }),
      },
      { additionalProperties: false },
    ),
    data: Type.Array(Type.Object({}, { additionalProperties: true }), {
      description: 'The rows the query answers, each an object of its columns (64-bit integers as numbers)',
    }),
    handle: async ({ query }, caller, deps) => ({ data: await runAnalyticsQuery(deps, caller, query, dataset) }),
  })
}
