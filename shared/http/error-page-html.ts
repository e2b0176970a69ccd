import { CODE_DOCS, DOCUMENTED_CODES, statusesOf, type DocumentedCode } from '../errors/documented-codes.js'
import { pageSecurityHeaders } from './page-security-headers.js'

/** The pages of the error codes, built once: the index (/docs/errors) and one per code (/docs/errors/<CODE>). */
export interface ErrorPages {
  index: string
  /** The page of `code`, or undefined when no code is so named. */
  page(code: string): string | undefined
}

/**
 * Static HTML built once from CODE_DOCS: escaped, no script, links relative to the page so that a path prefix in front
 * of Keygate keeps working. Served with ERROR_PAGE_HEADERS.
 */
export function buildErrorPages(docsBaseUrl: string): ErrorPages {
  const pages = new Map<string, string>(DOCUMENTED_CODES.map((code) => [code, errorPage(code, docsBaseUrl)] as const))
  return { index: indexPage(), page: (code) => pages.get(code) }
}

/** Nothing to load or run: the one stylesheet is inline in the page (STYLE); cached a little. */
export const ERROR_PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...pageSecurityHeaders(["default-src 'none'", "style-src 'unsafe-inline'"]),
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'public, max-age=300',
})

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

function errorPage(code: DocumentedCode, docsBaseUrl: string): string {
  const doc = CODE_DOCS[code]
  const example = JSON.stringify(
    { error: { code, message: '…', docs: `${docsBaseUrl}/errors/${code}`, requestId: 'req_…' } },
    null,
    2,
  )
  const status = statusesOf(code)
  return layout(
    `${code} (HTTP ${status}) · Keygate errors`,
    // From /docs/errors/<CODE>, `../errors` is the index whatever prefix Keygate is served under.
    `<p><a href="../errors">Keygate error codes</a></p>\n` +
      `<h1><code>${code}</code> <small>HTTP ${status}</small></h1>\n<p><strong>${inline(doc.title)}.</strong></p>\n` +
      `<h2>What it means</h2>\n${paragraphs(doc.meaning)}\n<h2>How to fix it</h2>\n${paragraphs(doc.fix)}\n` +
      `<h2>The answer</h2>\n<pre>${escapeHtml(example)}</pre>\n` +
      `<p><code>message</code> says what went wrong in this request; <code>requestId</code> (also the ` +
      `<code>X-Request-Id</code> header) finds it in the server's log.</p>`,
  )
}

function indexPage(): string {
  const rows = DOCUMENTED_CODES.map(
    (code) =>
      `<tr><td>${statusesOf(code)}</td><td><a href="errors/${code}"><code>${code}</code></a></td>` +
      `<td>${inline(CODE_DOCS[code].title)}</td></tr>`,
  ).join('\n')
  return layout(
    'Keygate error codes',
    `<h1>Keygate error codes</h1>\n<p>Every error is JSON in one shape, ` +
      `<code>{"error":{"code","message","docs","requestId"}}</code>; <code>docs</code> links to the page of its code. ` +
      `A gateway's refusals (the reverse proxy's, <code>X-Keygate-Code</code> at <code>/v1/authorize</code>) ` +
      `have their pages here too.</p>\n` +
      `<table><thead><tr><th>HTTP</th><th>code</th><th>when</th></tr></thead><tbody>\n${rows}\n</tbody></table>`,
  )
}

const paragraphs = (texts: string[]) => texts.map((text) => `<p>${inline(text)}</p>`).join('\n')

/** Text with `code` spans: escaped first, then the backticks become <code>. */
const inline = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>')

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
