import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../shared/errors.js'
import type { KeygateServer } from '../shared/http/build-server.js'
import { pageSecurityHeaders } from '../shared/http/page-security-headers.js'
import { packageRoot } from '../shared/package-root.js'

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

interface Asset {
  body: Buffer
  gzipped: Buffer
  type: string
  cacheControl: string
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
}
/** Bundles are named by content hash (console/build.mjs): a name never changes meaning, so browsers may keep it. */
const HASHED = /-[A-Z0-9]{8}\.(js|css)$/

/** dist/console of this package: beside the compiled modules, or, when tests run the sources, built beside them. */
export function builtConsoleDir(): URL {
  return new URL('dist/console/', packageRoot())
}

/** The built console's files by name, read and compressed once. */
export type ConsoleFiles = ReadonlyMap<string, Asset>

/** The built console's files, read and compressed once; null when it was not built. */
export function loadConsole(dir: URL): ConsoleFiles | null {
  if (!existsSync(new URL('index.html', dir))) return null
  const assets = new Map<string, Asset>()
  for (const name of readdirSync(dir)) {
    const type = TYPES[/\.[a-z]+$/.exec(name)?.[0] ?? '']
    if (type === undefined) continue
    const body = readFileSync(new URL(name, dir))
    // The page itself is revalidated every time: a new build's page names new bundles.
    const cacheControl = HASHED.test(name) ? 'public, max-age=31536000, immutable' : 'no-cache'
    assets.set(name, { body, gzipped: gzipSync(body), type, cacheControl })
  }
  return assets
}

/**
 * GET /console (the page) and /console/<file> (what it loads), from the files `npm run build` wrote, each with the
 * console's Content-Security-Policy and the other page protections. Public like /docs: the page holds no data;
 * everything it shows comes from management calls made with the root key the admin signs in with.
 */
export function registerConsole(app: KeygateServer, assets: ConsoleFiles | null): void {
  const send = (request: FastifyRequest, reply: FastifyReply, name: string) => {
    const asset = assets?.get(name)
    if (!assets) throw new ApiError('NOT_FOUND', 'the console is not built: run npm run build')
    if (!asset) throw new ApiError('NOT_FOUND', `the console has no file ${name}`)
    const gzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))
    void reply
      .type(asset.type)
      .header('cache-control', asset.cacheControl)
      .header('vary', 'accept-encoding')
      .headers(CONSOLE_HEADERS)
    if (gzip) void reply.header('content-encoding', 'gzip')
    return reply.send(gzip ? asset.gzipped : asset.body)
  }
  app.get('/console', { schema: { hide: true } }, async (request, reply) => send(request, reply, 'index.html'))
  // Relative links on the page resolve against /console, not /console/: send a trailing slash back there.
  app.get('/console/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('../console', 301))
  app.get<{ Params: { file: string } }>('/console/:file', { schema: { hide: true } }, async (request, reply) =>
    send(request, reply, request.params.file),
  )
}
