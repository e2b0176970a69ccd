import type { ConsoleAnswers, ConsoleOperation, ErrorBody, ProblemBody } from './types.js'
import type { AnalyticsRow } from './usage/usage-series.js'

/**
 * Keygate's own management API, called with the signed-in root key: the console can do exactly what that root key
 * may do. v1's wire format (API.md): GET reads with a query, POST writes with a JSON body, every error
 * `{error: {code, message, requestId}}`. Usage comes from v2's analytics route, whose errors are problems
 * `{meta: {requestId}, error: {title, detail, status, type}}`: said with the v1 code of their status.
 */

/** A call that did not answer 2xx: the contract's code and message, or status 0 when Keygate was not reached. */
export class ApiCallError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId?: string,
  ) {
    super(message)
  }
}

export type Query = Record<string, string | number | undefined>

/** What a failed call may have answered: Keygate's error body (v1's or v2's), or anything a proxy in front says. */
interface MaybeErrorBody {
  error?: Partial<ErrorBody['error']> & Partial<ProblemBody['error']>
  meta?: Partial<ProblemBody['meta']>
}

/** v2's statuses as v1 codes them, for describeError: the ones the analytics route answers. */
const V1_CODE_OF_STATUS: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'INSUFFICIENT_PERMISSIONS',
  412: 'PRECONDITION_FAILED',
  422: 'UNPROCESSABLE',
  429: 'RATE_LIMITED',
  503: 'UNAVAILABLE',
}

/** The API's base: the folder /console is served from, so that a proxy's path prefix in front of Keygate works. */
function apiBase(): URL {
  return new URL('.', window.location.href)
}

export class KeygateApi {
  constructor(private readonly rootKey: string) {}

  /** The answer is typed by the operation: each is what v1 answers it (ConsoleAnswers). */
  get<Operation extends ConsoleOperation>(operation: Operation, query: Query = {}): Promise<ConsoleAnswers[Operation]> {
    const url = new URL(`v1/${operation}`, apiBase())
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && value !== '') url.searchParams.set(name, String(value))
    }
    return this.call<ConsoleAnswers[Operation]>(url, 'GET')
  }

  post<Operation extends ConsoleOperation>(operation: Operation, body: object): Promise<ConsoleAnswers[Operation]> {
    return this.call<ConsoleAnswers[Operation]>(new URL(`v1/${operation}`, apiBase()), 'POST', JSON.stringify(body))
  }

  /**
   * One ClickHouse SELECT over the verifications (v2 analytics.getVerifications): the rows it answers, each an object
   * of its columns. Only the apis the root key may read analytics of are in them (403 without any; 412 where this
   * control plane serves no analytics).
   */
  async queryVerifications(query: string): Promise<AnalyticsRow[]> {
    const url = new URL('v2/analytics.getVerifications', apiBase())
    const answer = await this.call<{ data: AnalyticsRow[] }>(url, 'POST', JSON.stringify({ query }))
    return answer.data
  }

  private async call<T>(url: URL, method: 'GET' | 'POST', body?: string): Promise<T> {
    let response: Response
    try {
      response = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${this.rootKey}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body,
        // The root key travels in the header only: no cookies, no cache of answers that hold records.
        credentials: 'omit',
        cache: 'no-store',
      })
    } catch {
      throw new ApiCallError(0, 'UNREACHABLE', 'Keygate could not be reached: is it running?')
    }
    const answer = (await response.json().catch(() => ({}))) as unknown
    if (response.ok) return answer as T
    const { error = {}, meta } = answer as MaybeErrorBody
    throw new ApiCallError(
      response.status,
      error.code ?? V1_CODE_OF_STATUS[response.status] ?? `HTTP_${response.status}`,
      error.message ?? error.detail ?? response.statusText,
      error.requestId ?? meta?.requestId,
    )
  }
}

/** What to tell the admin about a failed call, in words: a 403 says what the root key lacks. */
export function describeError(err: unknown): string {
  if (!(err instanceof ApiCallError)) return `Something went wrong in the console: ${String(err)}`
  switch (err.code) {
    case 'INSUFFICIENT_PERMISSIONS':
      return `This root key may not do that: ${err.message}.`
    case 'UNAUTHORIZED':
      return 'Keygate refused the root key (unknown, revoked or disabled): sign out and sign in with another.'
    case 'UNREACHABLE':
      return err.message
    case 'RATE_LIMITED':
      return `Too many calls with this root key for now: ${err.message}.`
    default:
      return `${err.code}: ${err.message}${err.requestId ? ` (request ${err.requestId})` : ''}`
  }
}
