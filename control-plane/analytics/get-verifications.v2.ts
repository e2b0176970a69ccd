import { analyticsQueryRoute } from './query-adapter.v2.js'
import { VERIFICATIONS } from './query/query-rules.js'

/** v2's analytics.getVerifications: ClickHouse SQL over key_verifications_v1 and its rollups. */
export const getVerificationsV2 = analyticsQueryRoute(
  'analytics.getVerifications',
  VERIFICATIONS,
  {
    summary: 'Query verifications with ClickHouse SQL',
    description:
      "Runs one SELECT over `key_verifications_v1` (a row per verification of a key that exists) and its rollups `key_verifications_per_{minute,hour,day,month}_v1` (`count` and `spent_credits` per period; verifications of unknown keys are counted there, as `NOT_FOUND`). A root key with `api.*.read_analytics` reads every api's rows; one with `api.<apiId>.read_analytics` only those apis' (any other rows are simply not there). Rows older than a table keeps are never seen, and a lower bound on `time` before that is refused. 1,000 queries an hour over both analytics calls; 10 s, 1 GB and 4 MiB of answer each. See docs/analytics.md.",
  },
  'SELECT outcome, sum(count) AS verifications FROM key_verifications_per_day_v1 WHERE time >= now() - INTERVAL 30 DAY GROUP BY outcome',
)
