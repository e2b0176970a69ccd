import { mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { builtPageDir } from '../../control-plane/pages/built-page.js'
import { startTestControlPlane, type TestServer } from '../support/apps.js'

/**
 * /portal/ as the control plane serves it: the page a portal session's link opens and its files, named by content
 * hash, each under a Content-Security-Policy that allows nothing inline and, from elsewhere, only https images (the
 * portal's logo). Needs `npm run build`.
 */
let server: TestServer
let files: string[]

beforeAll(async () => {
  files = readdirSync(builtPageDir('portal'))
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

describe('/portal/', () => {
  it('serves the page with a strict CSP that lets in https images only from elsewhere', async () => {
    const page = await get('/portal/?code=pst_anything')
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(page.body).toContain('<div id="app"></div>')
    const csp = directives(page.headers['content-security-policy'])
    expect(csp.get('default-src')).toEqual(["'none'"])
    for (const name of ['script-src', 'style-src', 'connect-src']) expect(csp.get(name), name).toEqual(["'self'"])
    expect(csp.get('img-src')).toEqual(["'self'", 'https:'])
    expect(csp.get('frame-ancestors')).toEqual(["'none'"])
    expect(csp.get('base-uri')).toEqual(["'none'"])
    expect(csp.get('form-action')).toEqual(["'none'"])
    expect(csp.get('require-trusted-types-for')).toEqual(["'script'"])
    expect(csp.get('trusted-types')).toEqual(["'none'"])
    const everything = [...csp.values()].flat()
    for (const loose of ["'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", '*', 'data:', 'http:'])
      expect(everything, loose).not.toContain(loose)
    expect(page.headers).toMatchObject({
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'cross-origin-opener-policy': 'same-origin',
      'cache-control': 'no-cache',
    })
  })

  it('loads a script and a stylesheet named by content hash, kept a year, nothing inline', async () => {
    const page = (await get('/portal/')).body
    const loaded = [...page.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((match) => match[1]!)
    expect(loaded.sort()).toEqual(files.filter((name) => name !== 'index.html').sort())
    const script = loaded.find((name) => name.endsWith('.js'))
    const style = loaded.find((name) => name.endsWith('.css'))
    expect(script).toMatch(/^portal-[A-Z0-9]{8}\.js$/)
    expect(style).toMatch(/^portal-[A-Z0-9]{8}\.css$/)
    // Nothing a strict Content-Security-Policy would have to allow with 'unsafe-inline'.
    expect(page).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i)
    expect([...page.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)].map((match) => match[1])).toEqual([''])
    const policy = (await get('/portal/')).headers['content-security-policy']
    expect(policy).toMatch(/img-src 'self' https:/)
    for (const name of loaded) {
      const file = await get(`/portal/${name}`)
      expect(file.statusCode, name).toBe(200)
      expect(file.headers['content-security-policy'], name).toBe(policy)
      expect(file.headers['cache-control'], name).toBe(
        name.endsWith('.svg') ? 'no-cache' : 'public, max-age=31536000, immutable',
      )
    }
    expect((await get(`/portal/${script}`)).headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect((await get(`/portal/${style}`)).headers['content-type']).toBe('text/css; charset=utf-8')
  })

  it('sends /portal to /portal/ with its query (the link’s code), and answers 404 for unknown files', async () => {
    const bare = await get('/portal?code=pst_abc&x=1')
    expect(bare.statusCode).toBe(301)
    expect(bare.headers.location).toBe('portal/?code=pst_abc&x=1')
    expect((await get('/portal')).headers.location).toBe('portal/')
    const missing = await get('/portal/nothing.js')
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toMatchObject({ error: { code: 'NOT_FOUND', message: 'the portal has no file nothing.js' } })
    expect((await get('/portal/..%2Fpackage.json')).statusCode).toBe(404)
  })

  it('is left out of the API document', async () => {
    const document = (await get('/openapi.json')).json<{ paths: Record<string, unknown> }>()
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/portal'))).toEqual([])
  })

  it('says the portal is not built when it is not, rather than serving nothing', async () => {
    const empty = pathToFileURL(`${mkdtempSync(`${tmpdir()}/keygate-portal-`)}/`)
    const unbuilt = await startTestControlPlane({ portalPageDir: empty })
    try {
      const answer = await unbuilt.app.inject({ method: 'GET', url: '/portal/' })
      expect(answer.statusCode).toBe(404)
      expect(answer.json()).toMatchObject({ error: { message: 'the portal is not built: run npm run build' } })
    } finally {
      await unbuilt.close()
    }
  })
})
