import { isIP } from 'node:net'
import { Agent, request } from 'undici'
import { addressRefusal } from './address-policy.js'
import { checkedLookup, REFUSED_ADDRESS } from './checked-lookup.js'
import type { WebhookPolicy } from '../webhook-policy.js'

/** What one request to an endpoint came to. */
export interface EndpointAnswer {
  /** The endpoint's status; absent when no answer came. */
  status?: number
  /** Why no answer came: `timeout`, `refused: …`, the connection's error code. */
  error?: string
  latencyMs: number
  /** The first bytes of the answer's body, as text. */
  snippet?: string
}

/** Bytes of an answer read (and kept in the delivery log); the rest is never read. */
export const SNIPPET_BYTES = 1_024

/**
 * Sends signed events to endpoints, and nothing else: POST only, redirects not followed (undici's request follows
 * none), a deadline on the whole exchange, at most SNIPPET_BYTES of the answer read, and every address checked against
 * the private-range policy when the connection is made — not only when the URL was set, since a name may resolve
 * elsewhere later.
 */
export class EndpointSender {
  private readonly agent: Agent

  constructor(private readonly policy: Pick<WebhookPolicy, 'allowPrivateAddresses' | 'timeoutMs'>) {
    this.agent = new Agent({
      connect: { lookup: checkedLookup(policy.allowPrivateAddresses), timeout: policy.timeoutMs },
      headersTimeout: policy.timeoutMs,
      bodyTimeout: policy.timeoutMs,
      keepAliveTimeout: 4_000,
    })
  }

  async send(url: string, headers: Record<string, string>, body: string): Promise<EndpointAnswer> {
    const started = performance.now()
    const latencyMs = () => Math.round(performance.now() - started)
    // A literal address is connected to without a lookup: checked here.
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '')
    const refusal = isIP(host) ? addressRefusal(host, this.policy.allowPrivateAddresses) : undefined
    if (refusal) return { error: `refused: ${refusal}`, latencyMs: 0 }
    try {
      const answer = await request(url, {
        method: 'POST',
        // JSON unless the caller says otherwise (a meter export's provider may take a form).
        headers: { 'content-type': 'application/json', ...headers, 'user-agent': 'keygate-webhooks' },
        body,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.policy.timeoutMs),
      })
      const snippet = await readSnippet(answer.body)
      return { status: answer.statusCode, latencyMs: latencyMs(), ...(snippet ? { snippet } : {}) }
    } catch (err) {
      return { error: failureOf(err), latencyMs: latencyMs() }
    }
  }

  async close(): Promise<void> {
    await this.agent.close()
  }
}

/**
 * The first SNIPPET_BYTES of a body as text; the rest is not read (the stream is destroyed). The status has come by
 * then and is the answer: a body cut off (the deadline, a reset) gives what came of it, and the answer stands.
 */
async function readSnippet(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of body) {
      chunks.push(chunk)
      size += chunk.length
      if (size >= SNIPPET_BYTES) break
    }
  } catch {
    // Cut off: what came is the snippet.
  } finally {
    body.destroy()
  }
  return Buffer.concat(chunks).subarray(0, SNIPPET_BYTES).toString('utf8')
}

function failureOf(err: unknown): string {
  const error = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } }
  if (error.name === 'TimeoutError' || /Timeout/.test(error.code ?? '')) return 'timeout'
  const refused = [error, error.cause].find((e) => e?.code === REFUSED_ADDRESS)
  if (refused) return `refused: ${refused.message}`
  return error.code ?? error.cause?.code ?? error.name ?? 'error'
}
