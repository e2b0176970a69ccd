import type { PortalAnswer, PortalAnswers, PortalMethod, ProblemBody } from './types.js'

/**
 * The portal's session API (POST /v2/portal.<method>), called with the session's cookie, which the browser holds
 * and the page never sees: the page can do exactly what the session's scopes allow. v2's wire format: answers
 * `{meta, data}` (lists add `pagination`), errors `{meta, error: {title, detail, status, type}}`.
 */

/** A call that did not answer 2xx: the problem's status, type and detail; status 0: the server was not reached. */
export class PortalCallError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly detail: string,
    readonly requestId?: string,
  ) {
    super(detail)
  }
}

/** What a failed call may have answered: v2's problem body, or anything a proxy in front of the server says. */
interface MaybeProblemBody {
  meta?: Partial<ProblemBody['meta']>
  error?: Partial<ProblemBody['error']>
}

export class PortalApi {
  /** `onSessionEnded` is told of every 401: the cookie is gone, expired or revoked, and no call can succeed. */
  constructor(private readonly onSessionEnded: () => void) {}

  /** The answer is typed by the method: its `data` is what the route answers (PortalAnswers). */
  async call<Method extends PortalMethod>(
    method: Method,
    body: object = {},
  ): Promise<PortalAnswer<PortalAnswers[Method]>> {
    // The API is beside the page's folder (/portal/ → /v2/): a proxy's path prefix in front of Keygate keeps working.
    const url = new URL(`../v2/portal.${method}`, window.location.href)
    let response: Response
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        credentials: 'same-origin',
        // Answers hold keys shown once and the customer's records: never from nor into a cache.
        cache: 'no-store',
      })
    } catch {
      throw new PortalCallError(0, 'unreachable', 'The server could not be reached. Check your connection and retry.')
    }
    const answer = (await response.json().catch(() => ({}))) as unknown
    if (response.ok) return answer as PortalAnswer<PortalAnswers[Method]>
    const problem = answer as MaybeProblemBody
    const error = problem.error ?? {}
    if (response.status === 401) this.onSessionEnded()
    throw new PortalCallError(
      response.status,
      error.type ?? `http/${response.status}`,
      error.detail ?? error.title ?? response.statusText,
      problem.meta?.requestId,
    )
  }
}

/** What to tell the customer about a failed call, in words: the server's detail, and its request id to quote. */
export function describeError(err: unknown): string {
  if (!(err instanceof PortalCallError)) return `Something went wrong on this page: ${String(err)}`
  if (err.status === 0) return err.detail
  const reference = err.requestId ? ` (reference ${err.requestId})` : ''
  if (err.status === 403) return `This session may not do that: ${err.detail}${reference}`
  if (err.status === 429) return `Too many requests for now: ${err.detail}${reference}`
  return `${err.detail}${reference}`
}
