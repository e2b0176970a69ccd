import { ApiCallError } from '../api.js'

/**
 * Why usage cannot be shown here, when a query failed for a reason no retry mends: the root key may not read analytics
 * (403), or this control plane serves none (412: none configured, or another control plane runs the embedded engine).
 * Said in place of the charts, while the rest of the console works; any other failure is an error to show as one.
 */
export function usageUnavailable(error: unknown): string | undefined {
  if (!(error instanceof ApiCallError)) return undefined
  if (error.status === 403)
    return (
      'Usage is not shown: this root key may not read analytics. A root key with api.*.read_analytics ' +
      '(or api.<apiId>.read_analytics, for one api) sees it.'
    )
  if (error.status === 412) return `Usage is not shown: this control plane serves no analytics (${error.message}).`
  return undefined
}
