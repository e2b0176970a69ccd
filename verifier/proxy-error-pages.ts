import type { IncomingMessage, ServerResponse } from 'node:http'
import { buildErrorPages, ERROR_PAGE_HEADERS } from '../shared/http/error-page-html.js'

const INDEX = '/docs/errors'

/**
 * The error pages on the reverse proxy's port, where its bodies' `docs` links point while DOCS_BASE_URL is a path (the
 * default): a GET or HEAD of /docs/errors, or of /docs/errors/<CODE> for a code Keygate answers, is answered with the
 * page, as every Keygate server answers it, without a key. Any other path, /docs/errors/<anything else> included, is
 * the upstream's. Returns whether it answered; with DOCS_BASE_URL a URL the links point elsewhere and it never does.
 */
export function proxyErrorPages(docsBaseUrl: string): (req: IncomingMessage, res: ServerResponse) => boolean {
  if (!docsBaseUrl.startsWith('/')) return () => false
  const pages = buildErrorPages(docsBaseUrl)
  return (req, res) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !req.url?.startsWith(INDEX)) return false
    const path = req.url.split('?', 1)[0]!
    const page =
      path === INDEX ? pages.index : path.startsWith(`${INDEX}/`) ? pages.page(path.slice(INDEX.length + 1)) : undefined
    if (page === undefined) return false
    req.resume()
    res.writeHead(200, { ...ERROR_PAGE_HEADERS, 'content-length': Buffer.byteLength(page) })
    res.end(req.method === 'HEAD' ? undefined : page)
    return true
  }
}
