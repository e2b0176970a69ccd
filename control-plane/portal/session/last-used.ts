import type { AnalyticsAccess } from '../../analytics/analytics-access.js'
import { KEY_VERIFICATIONS } from '../../analytics/engine/analytics-tables.js'
import { reportErrorOf } from '../../analytics/report-error.js'
import { stringListParam } from '../../analytics/string-list-param.js'

/**
 * When each of these keys was last verified (Unix ms), from the analytics engine's rows of their apis; a key not
 * verified within the rows' retention, or any key where this control plane serves no analytics, has none. One read
 * for the page of keys.
 */
export async function lastUsedAt(
  analytics: AnalyticsAccess,
  keys: readonly { id: string; apiId: string }[],
): Promise<Map<string, number>> {
  const engine = analytics.engine()
  const used = new Map<string, number>()
  if (engine === undefined || keys.length === 0) return used
  const params: Record<string, string> = {}
  const apis = stringListParam('api', [...new Set(keys.map((key) => key.apiId))], params)
  const ids = stringListParam(
    'key',
    keys.map((key) => key.id),
    params,
  )
  try {
    const rows = await engine.query(
      `SELECT key_id, max(time) AS last FROM \`${KEY_VERIFICATIONS.name}\` ` +
        `WHERE key_space_id IN ${apis} AND key_id IN ${ids} GROUP BY key_id SETTINGS max_execution_time = 10, max_threads = 2`,
      params,
    )
    for (const row of rows) used.set(String(row.key_id), Number(row.last))
  } catch (err) {
    throw reportErrorOf(err)
  }
  return used
}
