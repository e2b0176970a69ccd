import type { KeygateServer } from '../../shared/http/keygate-server.js'
import { pageSecurityHeaders } from '../../shared/http/page-security-headers.js'
import { builtPageDir, loadBuiltPage, sendBuiltFile, type BuiltPage, type BuiltPageFiles } from './built-page.js'

/**
 * The admin console's policy: its own script, stylesheet and icon, calls to this origin's API, nothing else. No
 * inline script or style is allowed (the bundle needs neither: styles are set through the CSSOM), and with Trusted
 * Types no string can reach an HTML sink such as innerHTML: key names and meta are attacker-controlled text.
 */
const CONSOLE_HEADERS = pageSecurityHeaders([
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
])

/** dist/console of this package: beside the compiled modules, or, when tests run the sources, built beside them. */
export function builtConsoleDir(): URL {
  return builtPageDir('console')
}

/** The built console's files by name, read and compressed once. */
export type ConsoleFiles = BuiltPageFiles

/** The built console's files, read and compressed once; null when it was not built. */
export function loadConsole(dir: URL): ConsoleFiles | null {
  return loadBuiltPage(dir)
}

/**
 * GET /console (the page) and /console/<file> (what it loads), from the files `npm run build` wrote, each with the
 * console's Content-Security-Policy and the other page protections. Public like /docs: the page holds no data;
 * everything it shows comes from management calls made with the root key the admin signs in with.
 */
export function registerConsole(app: KeygateServer, files: ConsoleFiles | null): void {
  const page: BuiltPage = { files, headers: CONSOLE_HEADERS, what: 'the console' }
  app.get('/console', { schema: { hide: true } }, async (request, reply) =>
    sendBuiltFile(page, request, reply, 'index.html'),
  )
  // Relative links on the page resolve against /console, not /console/: send a trailing slash back there.
  app.get('/console/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('../console', 301))
  app.get<{ Params: { file: string } }>('/console/:file', { schema: { hide: true } }, async (request, reply) =>
    sendBuiltFile(page, request, reply, request.params.file),
  )
}
