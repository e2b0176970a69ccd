import type { FastifyReply } from 'fastify'
import { ERROR_DOCS } from '../error-docs.js'
import { ApiError, ERRORS, type ErrorCode } from '../errors.js'
import { closestName } from '../closest-name.js'
import { clipInput } from '../clip-input.js'
import type { KeygateServer } from './build-server.js'
import { pageSecurityHeaders } from './page-security-headers.js'

/**
 * The pages error bodies link to: /docs/errors (every code) and /docs/errors/<CODE> (what it means, how to fix
 * it). Served by every Keygate server, so that the default link (the path `/docs/errors/<CODE>`, relative to the
 * server that answered) resolves wherever the answer came from. Static HTML built once from ERROR_DOCS: escaped,
 * no script, a CSP that allows none (and the other page protections), and links relative to the page so that a
 * path prefix in front of Keygate keeps working.
 */
export function registerErrorPages(app: KeygateServer, docsBaseUrl: string): void {
  const pages = new Map<string, string>(
    (Object.keys(ERRORS) as ErrorCode[]).map((code) => [code, errorPage(code, docsBaseUrl)] as const),
  )
  const index = indexPage()
  app.get('/docs/errors', { schema: { hide: true } }, async (_request, reply) => sendPage(reply, index))
  app.get<{ Params: { code: string } }>('/docs/errors/:code', { schema: { hide: true } }, async (request, reply) => {
    const { code } = request.params
    const page = pages.get(code)
    if (page === undefined) {
      const nearest = closestName(code, pages.keys())
      throw new ApiError(
        'NOT_FOUND',
        `no error code ${clipInput(code)}${nearest ? `; did you mean ${nearest}?` : ''} (every code: /docs/errors)`,
      )
    }
    return sendPage(reply, page)
  })
}

/** Nothing to load or run: the one stylesheet is inline in the page (STYLE). */
const HEADERS = pageSecurityHeaders(["default-src 'none'", "style-src 'unsafe-inline'"])

function sendPage(reply: FastifyReply, html: string) {
  return reply
    .type('text/html; charset=utf-8')
    .headers(HEADERS)
    .header('cache-control', 'public, max-age=300')
    .send(html)
}

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}' +
  'code,pre{font:14px ui-monospace,monospace;background:#f3f3f3;border-radius:3px}code{padding:0 .2em}' +
  'pre{padding:.6em;overflow-x:auto}h1 code{font-size:inherit}h1 small{font-weight:normal;color:#555}' +
  'table{border-collapse:collapse}' +
  'td,th{text-align:left;padding:.2em .8em .2em 0;vertical-align:top}'

function layout(title: string, body: string): string {
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>\n<body><main>\n${body}\n</main></body></html>\n`
  )
}

function errorPage(code: ErrorCode, docsBaseUrl: string): string {
  const doc = ERROR_DOCS[code]
  const example = JSON.stringify(
    { error: { code, message: '…', docs: `${docsBaseUrl}/errors/${code}`, requestId: 'req_…' } },
    null,
    2,
  )
  return layout(
    `${code} (HTTP ${ERRORS[code]}) · Keygate errors`,
    // From /docs/errors/<CODE>, `../errors` is the index whatever prefix Keygate is served under.
    `<p><a href="../errors">Keygate error codes</a></p>\n` +
      `<h1><code>${code}</code> <small>HTTP ${ERRORS[code]}</small></h1>\n<p><strong>${inline(doc.title)}.</strong></p>\n` +
      `<h2>What it means</h2>\n${paragraphs(doc.meaning)}\n<h2>How to fix it</h2>\n${paragraphs(doc.fix)}\n` +
      `<h2>The answer</h2>\n<pre>${escapeHtml(example)}</pre>\n` +
      `<p><code>message</code> says what went wrong in this request; <code>requestId</code> (also the ` +
      `<code>X-Request-Id</code> header) finds it in the server's log.</p>`,
  )
}

function indexPage(): string {
  const rows = (Object.keys(ERRORS) as ErrorCode[])
    .map(
      (code) =>
        `<tr><td>${ERRORS[code]}</td><td><a href="errors/${code}"><code>${code}</code></a></td>` +
        `<td>${inline(ERROR_DOCS[code].title)}</td></tr>`,
    )
    .join('\n')
  return layout(
    'Keygate error codes',
    `<h1>Keygate error codes</h1>\n<p>Every error is JSON in one shape, ` +
      `<code>{"error":{"code","message","docs","requestId"}}</code>; <code>docs</code> links to the page of its code.</p>\n` +
      `<table><thead><tr><th>HTTP</th><th>code</th><th>when</th></tr></thead><tbody>\n${rows}\n</tbody></table>`,
  )
}

const paragraphs = (texts: string[]) => texts.map((text) => `<p>${inline(text)}</p>`).join('\n')

/** Text with `code` spans: escaped first, then the backticks become <code>. */
const inline = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>')

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
