import type { IncomingMessage } from 'node:http'
import { buildErrorPages } from '../shared/http/error-page-html.js'

const INDEX = '/docs/errors'

/**
 * The error pages on the reverse proxy's port, where its bodies' `docs` links point while DOCS_BASE_URL is a path (the
 * default): a GET or HEAD of /docs/errors, or of /docs/errors/<CODE> for a code Keygate answers, is answered with the
 * page, as every Keygate server answers it, without a key. Any other method or path, /docs/errors/<anything else>
 * included, is the upstream's. Returns the page a request is answered with, if any (the proxy sends it, counted and
 * timed as its other answers); with DOCS_BASE_URL a URL the links point elsewhere and it never returns one.
 */
export function proxyErrorPages(docsBaseUrl: string): (req: IncomingMessage) => string | undefined {
  if (!docsBaseUrl.startsWith('/')) return () => undefined
  const pages = buildErrorPages(docsBaseUrl)
  return (req) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !req.url?.startsWith(INDEX)) return undefined
    const path = req.url.split('?', 1)[0]!
    return path === INDEX
      ? pages.index
      : path.startsWith(`${INDEX}/`)
        ? pages.page(path.slice(INDEX.length + 1))
        : undefined
  }
}
