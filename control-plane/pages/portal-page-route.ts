import type { KeygateServer } from '../../shared/http/keygate-server.js'
import { pageSecurityHeaders } from '../../shared/http/page-security-headers.js'
import { sendBuiltFile, type BuiltPage, type BuiltPageFiles } from './built-page.js'

/**
 * The customer portal's policy: the console's (its own script and stylesheet, calls to this origin only, nothing
 * inline, Trusted Types), and images from any https origin, for the logo the operator set on the portal. Key names,
 * meta and the portal's own name are text the page never parses as HTML.
 */
const PORTAL_HEADERS = pageSecurityHeaders([
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' https:",
  "connect-src 'self'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
])

/**
 * GET /portal/ (the page a portal session's link opens) and /portal/<file> (what it loads), from the files `npm run
 * build` wrote into dist/portal. Public: the page holds no data; it signs in with the link's one-time code
 * (portal.exchangeCode) and shows what the session's calls answer.
 */
export function registerPortalPage(app: KeygateServer, files: BuiltPageFiles | null): void {
  const page: BuiltPage = { files, headers: PORTAL_HEADERS, what: 'the portal' }
  app.get('/portal/', { schema: { hide: true } }, async (request, reply) =>
    sendBuiltFile(page, request, reply, 'index.html'),
  )
  // The page links its files relative to /portal/: without the slash, send the browser there, the code kept.
  app.get('/portal', { schema: { hide: true } }, async (request, reply) => {
    const query = request.url.indexOf('?')
    return reply.redirect(`portal/${query < 0 ? '' : request.url.slice(query)}`, 301)
  })
  app.get<{ Params: { file: string } }>('/portal/:file', { schema: { hide: true } }, async (request, reply) =>
    sendBuiltFile(page, request, reply, request.params.file),
  )
}
