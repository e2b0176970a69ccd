import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../../shared/errors/errors.js'
import { packageRoot } from '../../shared/package-root.js'

interface Asset {
  body: Buffer
  gzipped: Buffer
  type: string
  cacheControl: string
}

/** A built page's files by name (index.html, its hashed script and stylesheet, an icon), read and compressed once. */
export type BuiltPageFiles = ReadonlyMap<string, Asset>

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
}
/** Bundles are named by content hash (scripts/bundle-page.mjs): a name never changes meaning; browsers may keep it. */
const HASHED = /-[A-Z0-9]{8}\.(js|css)$/

/** dist/<name> of this package: beside the compiled modules, or, when tests run the sources, built beside them. */
export function builtPageDir(name: 'console' | 'portal'): URL {
  return new URL(`dist/${name}/`, packageRoot())
}

/** A page `npm run build` wrote into `dir`, read and compressed once; null when it was not built. */
export function loadBuiltPage(dir: URL): BuiltPageFiles | null {
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

/** How one built page is served: its files, its page protections, and its name in errors ("the console"). */
export interface BuiltPage {
  files: BuiltPageFiles | null
  headers: Readonly<Record<string, string>>
  what: string
}

/** Answers with the page's file `name` (gzipped for a browser that takes it) under the page's headers, or a 404. */
export function sendBuiltFile(page: BuiltPage, request: FastifyRequest, reply: FastifyReply, name: string) {
  if (!page.files) throw new ApiError('NOT_FOUND', `${page.what} is not built: run npm run build`)
  const asset = page.files.get(name)
  if (!asset) throw new ApiError('NOT_FOUND', `${page.what} has no file ${name}`)
  const gzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))
  void reply
    .type(asset.type)
    .header('cache-control', asset.cacheControl)
    .header('vary', 'accept-encoding')
    .headers(page.headers)
  if (gzip) void reply.header('content-encoding', 'gzip')
  return reply.send(gzip ? asset.gzipped : asset.body)
}
