import { mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { pathToFileURL } from 'node:url'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { builtConsoleDir } from '../../control-plane/pages/console-route.js'
import { startTestControlPlane, type TestServer } from '../support/apps.js'

/**
 * /console as the control plane (and `keygate dev`, the same app) serves it: the built page and its files, each
 * under a Content-Security-Policy that allows nothing inline and nothing from elsewhere. Needs `npm run build`.
 */
let server: TestServer
let files: string[]

beforeAll(async () => {
  files = readdirSync(builtConsoleDir())
  server = await startTestControlPlane()
})
afterAll(async () => {
  await server.close()
})

const get = (url: string, headers: Record<string, string> = {}) => server.app.inject({ method: 'GET', url, headers })

/** Every directive of a CSP header, by name. */
function directives(header: unknown): Map<string, string[]> {
  return new Map(
    String(header)
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .map(([name, ...values]) => [name!, values]),
  )
}

describe('/console', () => {
  it('serves the page with a strict CSP: own files only, no inline script or style, no eval, no framing', async () => {
    const page = await get('/console')
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(page.body).toContain('<div id="app"></div>')
    const csp = directives(page.headers['content-security-policy'])
    expect(csp.get('default-src')).toEqual(["'none'"])
    for (const name of ['script-src', 'style-src', 'connect-src', 'img-src'])
      expect(csp.get(name), name).toEqual(["'self'"])
    expect(csp.get('frame-ancestors')).toEqual(["'none'"])
    expect(csp.get('base-uri')).toEqual(["'none'"])
    expect(csp.get('form-action')).toEqual(["'none'"])
    expect(csp.get('require-trusted-types-for')).toEqual(["'script'"])
    const everything = [...csp.values()].flat()
    for (const loose of ["'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", '*', 'data:', 'http:', 'https:'])
      expect(everything, loose).not.toContain(loose)
    expect(page.headers).toMatchObject({
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'cache-control': 'no-cache',
    })
  })

  it('serves each file the page loads with its type, the same CSP, and a long cache for the hashed bundles', async () => {
    const page = (await get('/console')).body
    const loaded = [...page.matchAll(/(?:src|href)="console\/([^"]+)"/g)].map((match) => match[1]!)
    expect(loaded.sort()).toEqual(files.filter((name) => name !== 'index.html').sort())
    const types: Record<string, string> = {
      js: 'text/javascript; charset=utf-8',
      css: 'text/css; charset=utf-8',
      svg: 'image/svg+xml',
    }
    const policy = (await get('/console')).headers['content-security-policy']
    // Comparing alone would pass if no response carried a policy at all.
    expect(policy).toMatch(/script-src 'self'/)
    for (const name of loaded) {
      const file = await get(`/console/${name}`)
      expect(file.statusCode, name).toBe(200)
      expect(file.headers['content-type'], name).toBe(types[name.split('.').pop()!])
      expect(file.headers['content-security-policy'], name).toBe(policy)
      expect(file.headers['cache-control'], name).toBe(
        name.endsWith('.svg') ? 'no-cache' : 'public, max-age=31536000, immutable',
      )
    }
  })

  it('sends gzip to a browser that takes it, the same bytes once inflated', async () => {
    const script = files.find((name) => name.endsWith('.js'))!
    const plain = await get(`/console/${script}`)
    const gzipped = await get(`/console/${script}`, { 'accept-encoding': 'gzip, deflate, br' })
    expect(plain.headers['content-encoding']).toBeUndefined()
    expect(gzipped.headers['content-encoding']).toBe('gzip')
    expect(gzipped.headers.vary).toBe('accept-encoding')
    expect(gzipped.rawPayload.length).toBeLessThan(plain.rawPayload.length)
    expect(gunzipSync(gzipped.rawPayload).equals(plain.rawPayload)).toBe(true)
  })

  it('sends /console/ back to /console (the page links its files relative to it); unknown files are a 404', async () => {
    const slash = await get('/console/')
    expect(slash.statusCode).toBe(301)
    expect(slash.headers.location).toBe('../console')
    const missing = await get('/console/nothing.js')
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toMatchObject({
      error: { code: 'NOT_FOUND', message: 'the console has no file nothing.js' },
    })
    expect((await get('/console/..%2Fpackage.json')).statusCode).toBe(404)
  })

  it('needs no root key (the page holds no data) and is left out of the API document', async () => {
    expect((await get('/console')).statusCode).toBe(200)
    const document = (await get('/openapi.json')).json<{ paths: Record<string, unknown> }>()
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/console'))).toEqual([])
  })

  it('says the console is not built when it is not, rather than serving nothing', async () => {
    const empty = pathToFileURL(`${mkdtempSync(`${tmpdir()}/keygate-console-`)}/`)
    const unbuilt = await startTestControlPlane({ consoleDir: empty })
    try {
      const answer = await unbuilt.app.inject({ method: 'GET', url: '/console' })
      expect(answer.statusCode).toBe(404)
      expect(answer.json()).toMatchObject({ error: { message: 'the console is not built: run npm run build' } })
    } finally {
      await unbuilt.close()
    }
  })
})
