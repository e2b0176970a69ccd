import { analyticsQueryRoute } from './query-adapter.v2.js'
import { RATELIMIT_DECISIONS } from './query/query-rules.js'

/** v2's analytics.getRatelimits: ClickHouse SQL over ratelimits_v1 and its rollups. */
export const getRatelimitsV2 = analyticsQueryRoute(
  'analytics.getRatelimits',
  RATELIMIT_DECISIONS,
  {
    summary: 'Query rate-limit decisions with ClickHouse SQL',
    description:
      "Runs one SELECT over `ratelimits_v1` (a row per ratelimits.limit decision) and its rollups `ratelimits_per_{minute,hour,day,month}_v1` (`passed` and `total` per period). A root key with `ratelimit.*.read_analytics` reads every namespace's rows; one with `ratelimit.<namespaceId>.read_analytics` only those namespaces'. The same limits as analytics.getVerifications, and one quota for both. See docs/analytics.md.",
  },
  'SELECT identifier, sum(passed) AS passed, sum(total) AS total FROM ratelimits_per_hour_v1 WHERE time >= now() - INTERVAL 1 DAY GROUP BY identifier ORDER BY total DESC LIMIT 10',
)
