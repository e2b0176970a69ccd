import { connect } from 'node:net'
import { pino } from 'pino'
import { Registry } from 'prom-client'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assembleVerifier } from '../../cli/assemble-verifier.js'
import { monotonicClock, systemClock } from '../../shared/clock.js'
import { CODE_DOCS, DOCUMENTED_CODES, statusesOf, type DocumentedCode } from '../../shared/errors/documented-codes.js'
import type { ErrorCode } from '../../shared/errors/errors.js'
import { GATEWAY_CODES } from '../../shared/errors/gateway-codes.js'
import { newId } from '../../shared/ids.js'
import { generateKey } from '../../shared/keys/key-material.js'
import { createReverseProxy, type ReverseProxy } from '../../verifier/proxy-server.js'
import {
  DEFAULT_SYNC,
  openBackend,
  startTestControlPlane,
  startTestVerifier,
  type Backend,
  type TestServer,
} from '../support/apps.js'
import { startEchoUpstream, type EchoUpstream } from '../support/echo-upstream.js'

/**
 * Every error body links to a page that exists: /docs/errors/<CODE>, served by each Keygate server (control
 * plane, dev, verifier, reverse proxy), as an absolute URL on the server that answered unless DOCS_BASE_URL says where
 * the docs are.
 */
let controlPlane: TestServer
let verifier: TestServer
let upstream: EchoUpstream
let proxy: ReverseProxy
let controlPlaneUrl: string
let verifierUrl: string
let proxyUrl: string
let apiId: string

beforeAll(async () => {
  controlPlane = await startTestControlPlane()
  verifier = await startTestVerifier({ backend: controlPlane.backend })
  controlPlaneUrl = await controlPlane.app.listen({ port: 0, host: '127.0.0.1' })
  verifierUrl = await verifier.app.listen({ port: 0, host: '127.0.0.1' })
  apiId = newId('api')
  await controlPlane.backend.store.keys.createApi({ id: apiId, name: 'proxied', createdAt: Date.now() })
  upstream = await startEchoUpstream()
  proxy = createReverseProxy({
    verifier: verifier.verifier,
    policy: { keyHeader: 'x-api-key', cost: 1, apiId },
    log: pino({ level: 'silent' }),
    registry: new Registry(),
    options: { upstreamUrl: upstream.url, connections: 2, timeoutMs: 5_000, docsBaseUrl: '/docs' },
  })
  await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve))
  const address = proxy.server.address()
  proxyUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
})
afterAll(async () => {
  await proxy.close()
  await upstream.stop()
  await verifier.close()
  await controlPlane.close()
})

const CODES = DOCUMENTED_CODES

async function get(url: string) {
  const response = await request(url)
  return { status: response.statusCode, headers: response.headers, body: await response.body.text() }
}

describe('error pages', () => {
  it('has a page for every code: what it means and how to fix it, as HTML with no script', async () => {
    for (const code of CODES) {
      const page = await get(`${controlPlaneUrl}/docs/errors/${code}`)
      expect(page.status, code).toBe(200)
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(page.headers['content-security-policy']).toMatch(/default-src 'none'/)
      expect(page.headers['content-security-policy']).not.toMatch(/script-src/)
      expect(page.body).toContain(`<h1><code>${code}</code> <small>HTTP ${statusesOf(code)}</small></h1>`)
      expect(page.body).toContain('<h2>What it means</h2>')
      expect(page.body).toContain('<h2>How to fix it</h2>')
      expect(page.body).not.toMatch(/<script|\son[a-z]+=/i)
      expect(CODE_DOCS[code].fix.length, code).toBeGreaterThan(0)
    }
    // A code a gateway answers with another status says both.
    expect((await get(`${controlPlaneUrl}/docs/errors/NOT_FOUND`)).body).toContain('<small>HTTP 404 (a gateway: 401)')
    // Text is escaped: `<root key>` in the docs is not a tag.
    const unauthorized = (await get(`${controlPlaneUrl}/docs/errors/UNAUTHORIZED`)).body
    expect(unauthorized).toContain('Bearer &#60;root key&#62;')
    expect(unauthorized).not.toContain('<root key>')
  })

  it("carries the console's protections on every server: no framing, no sniffing, no referrer", async () => {
    for (const url of [`${controlPlaneUrl}/docs/errors`, `${verifierUrl}/docs/errors/NOT_FOUND`]) {
      const { headers } = await get(url)
      expect(headers['content-security-policy'], url).toMatch(/(^|; )frame-ancestors 'none'(;|$)/)
      expect(headers, url).toMatchObject({
        'x-frame-options': 'DENY',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-resource-policy': 'same-origin',
      })
    }
  })

  it('lists every code on an index whose links, and the pages links back, resolve', async () => {
    const index = await get(`${controlPlaneUrl}/docs/errors`)
    expect(index.status).toBe(200)
    const links = [...index.body.matchAll(/href="([^"]+)"/g)].map(
      (m) => new URL(m[1]!, `${controlPlaneUrl}/docs/errors`),
    )
    expect(links.map((url) => url.pathname)).toEqual(CODES.map((code) => `/docs/errors/${code}`))
    for (const link of links) expect((await get(link.href)).status, link.href).toBe(200)
    const back = /href="([^"]+)"/.exec((await get(`${controlPlaneUrl}/docs/errors/CONFLICT`)).body)![1]!
    expect(new URL(back, `${controlPlaneUrl}/docs/errors/CONFLICT`).pathname).toBe('/docs/errors')
  })

  it('serves the page of every code any process answers, on every process that answers it', async () => {
    // The single source: every code of the error table, and every refusal a gateway answers with.
    expect(CODES).toEqual(expect.arrayContaining(Object.keys(GATEWAY_CODES).filter((code) => code !== 'VALID')))
    const missing: string[] = []
    for (const [process, base] of [
      ['control plane', controlPlaneUrl],
      ['verifier', verifierUrl],
      ['reverse proxy', proxyUrl],
    ] as const) {
      if ((await get(`${base}/docs/errors`)).status !== 200) missing.push(`${process}: /docs/errors`)
      for (const code of CODES) {
        const page = await get(`${base}/docs/errors/${code}`)
        if (page.status !== 200 || !page.body.includes(`<code>${code}</code>`)) missing.push(`${process}: ${code}`)
      }
    }
    expect(missing).toEqual([])
    // On the proxy, any other path under /docs/errors is the upstream's (here: no key, refused).
    const other = await request(`${proxyUrl}/docs/errors/NOPE`)
    expect(other.statusCode).toBe(401)
    expect(((await other.body.json()) as { error: { code: string } }).error.code).toBe('MISSING_KEY')
  })

  it("links each gateway refusal to its page, where the link points: the verifier's, the proxy's", async () => {
    const issue = async (api: string, enabled: boolean) => {
      const { key, hash, start } = generateKey('sk')
      await controlPlane.backend.store.keys.createKey({
        id: newId('key'),
        hash,
        start,
        apiId: api,
        enabled,
        createdAt: Date.now(),
      })
      return key
    }
    const otherApi = newId('api')
    await controlPlane.backend.store.keys.createApi({ id: otherApi, name: 'other', createdAt: Date.now() })
    const [disabled, foreign] = [await issue(apiId, false), await issue(otherApi, true)]
    const answers = [
      await request(`${verifierUrl}/v1/authorize`, { headers: { 'x-api-key': foreign } }),
      await request(`${proxyUrl}/orders`),
      await request(`${proxyUrl}/orders`, { headers: { 'x-api-key': disabled } }),
      await request(`${proxyUrl}/orders`, { headers: { 'x-api-key': foreign } }),
      await request(`${proxyUrl}/orders`, { headers: { 'x-api-key': `${foreign}x` } }),
    ]
    const codes: DocumentedCode[] = []
    for (const answer of answers) {
      const { error } = (await answer.body.json()) as { error: { code: DocumentedCode; docs: string } }
      expect(answer.headers['x-keygate-code']).toBe(error.code)
      const page = await get(error.docs)
      expect(page.status, error.docs).toBe(200)
      expect(page.body).toContain(`<h1><code>${error.code}</code>`)
      codes.push(error.code)
    }
    expect(codes).toEqual(['API_ID_REQUIRED', 'MISSING_KEY', 'DISABLED', 'FORBIDDEN', 'NOT_FOUND'])
  })

  it('answers an unknown code in the contract shape, with the code probably meant', async () => {
    const page = await get(`${controlPlaneUrl}/docs/errors/BAD_REQEST`)
    expect(page.status).toBe(404)
    expect(JSON.parse(page.body).error).toMatchObject({
      code: 'NOT_FOUND',
      message: 'no error code BAD_REQEST; did you mean BAD_REQUEST? (every code: /docs/errors)',
    })
  })

  it("links every error body, by default, to a page on the server that answered: control plane, verifier, verifier's fast route", async () => {
    const answers = [
      await request(`${controlPlaneUrl}/v1/apis.createApi`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"name":"x"}',
      }),
      await request(`${controlPlaneUrl}/v1/keys.createkey`, { method: 'POST' }),
      await request(`${verifierUrl}/v1/keys.verifyKey`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"key":""}',
      }),
      await request(`${verifierUrl}/v1/keys.verifyKey`, { method: 'GET' }),
    ]
    const bases = [controlPlaneUrl, controlPlaneUrl, verifierUrl, verifierUrl]
    const codes: string[] = []
    for (const [i, answer] of answers.entries()) {
      const { error } = (await answer.body.json()) as { error: { code: ErrorCode; docs: string } }
      // Absolute, on the address the request was sent to: the link works wherever the answer is read.
      expect(error.docs).toBe(`${bases[i]}/docs/errors/${error.code}`)
      const page = await get(error.docs)
      expect(page.status, error.docs).toBe(200)
      expect(page.body).toContain(`<code>${error.code}</code>`)
      codes.push(error.code)
    }
    expect(codes).toEqual(['UNAUTHORIZED', 'NOT_FOUND', 'BAD_REQUEST', 'METHOD_NOT_ALLOWED'])
  })

  it("links on the host the client named, and on the socket's address when the Host header is not a host", async () => {
    const port = new URL(verifierUrl).port
    const raw = (head: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => socket.end(head))
        let text = ''
        socket.on('data', (chunk) => (text += String(chunk)))
        socket.on('end', () => resolve(text))
        socket.on('error', reject)
      })
    const docsIn = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.docs
    const post = (host: string) =>
      `POST /v1/keys.verifyKey HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 1\r\nConnection: close\r\n\r\n{`
    // The fast route, with the name a client (or a gateway in front) used.
    expect(docsIn(await raw(post('keygate.internal:9000')))).toBe(
      'http://keygate.internal:9000/docs/errors/BAD_REQUEST',
    )
    // Not a host: the address the connection came to instead.
    expect(docsIn(await raw(post('evil.example/<script>')))).toBe(`http://127.0.0.1:${port}/docs/errors/BAD_REQUEST`)
    // Refused by the HTTP parser before any request exists: the socket's address.
    expect(docsIn(await raw('NOT HTTP\r\n\r\n'))).toBe(`http://127.0.0.1:${port}/docs/errors/BAD_REQUEST`)
  })

  it('links to the configured public base instead, on every path (the fast route included)', async () => {
    const backend: Backend = await openBackend()
    const { app, verifier: keyVerifier } = await assembleVerifier(
      {
        store: backend.store,
        feed: backend.feed,
        clock: systemClock,
        elapsed: monotonicClock,
        log: pino({ level: 'silent' }),
      },
      {
        bodyLimitBytes: 1_048_576,
        docsBaseUrl: 'https://keygate.example.com/docs',
        cache: { maxKeys: 10, maxUnknown: 10, unknownTtlMs: 1_000 },
        sync: DEFAULT_SYNC,
        gateway: { keyHeader: 'x-api-key', cost: 1 },
      },
    )
    try {
      await keyVerifier.start()
      const url = await app.listen({ port: 0, host: '127.0.0.1' })
      const fast = await request(`${url}/v1/keys.verifyKey`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{',
      })
      const slow = await app.inject({
        method: 'POST',
        url: '/v1/keys.verifyKey',
        payload: '{',
        headers: { 'content-type': 'application/json' },
      })
      for (const body of [(await fast.body.json()) as any, slow.json()])
        expect(body.error.docs).toBe('https://keygate.example.com/docs/errors/BAD_REQUEST')
    } finally {
      await app.close()
      await backend.close()
    }
  })
})

describe("the reverse proxy's error pages", () => {
  const proxies: ReverseProxy[] = []
  let key: string
  beforeAll(async () => {
    const made = generateKey('sk')
    await controlPlane.backend.store.keys.createKey({
      id: newId('key'),
      hash: made.hash,
      start: made.start,
      apiId,
      enabled: true,
      createdAt: Date.now(),
    })
    key = made.key
    upstream.seen.length = 0
  })
  afterAll(async () => {
    for (const started of proxies) await started.close()
  })

  /** A proxy before the echo upstream, its docs links at `docsBaseUrl`, its metrics on `registry`. */
  async function startProxy(docsBaseUrl: string, registry = new Registry()): Promise<string> {
    const started = createReverseProxy({
      verifier: verifier.verifier,
      policy: { keyHeader: 'x-api-key', cost: 1, apiId },
      log: pino({ level: 'silent' }),
      registry,
      options: { upstreamUrl: upstream.url, connections: 2, timeoutMs: 5_000, docsBaseUrl },
    })
    proxies.push(started)
    await new Promise<void>((resolve) => started.server.listen(0, '127.0.0.1', resolve))
    const address = started.server.address()
    return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  }

  /** A request line as written (`..` and `//` kept), answered on a connection the server closes. */
  function raw(url: string, target: string, method = 'GET', headers = ''): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const socket = connect(Number(new URL(url).port), '127.0.0.1')
      let got = ''
      socket.on('data', (data) => (got += data.toString()))
      socket.on('error', reject)
      socket.on('end', () => resolve({ status: Number(got.slice(9, 12)), text: got }))
      socket.write(`${method} ${target} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n${headers}\r\n`)
    })
  }

  it('answers only the exact pages without a key: no other path under /docs/errors skips the key check', async () => {
    expect((await raw(proxyUrl, '/docs/errors/FORBIDDEN')).status).toBe(200)
    expect((await raw(proxyUrl, '/docs/errors/FORBIDDEN?x=1')).status).toBe(200)
    expect((await raw(proxyUrl, '/docs/errors', 'HEAD')).status).toBe(200)
    for (const target of [
      '/docs/errors/FORBIDDEN/../../admin',
      '/docs/errors/../admin',
      '/docs/errors/%2e%2e/admin',
      '/docs/errors/%2E%2E%2Fadmin',
      '//docs/errors/FORBIDDEN',
      '/docs/errors//FORBIDDEN',
      '/docs/errors/forbidden',
      '/docs/errors/FORBIDDEN/',
      '/docs/errors/',
      '/docs/errorsX',
      '/docs/errors/__proto__',
      '/DOCS/errors/FORBIDDEN',
    ]) {
      const answer = await raw(proxyUrl, target)
      expect(answer.status, target).toBe(401)
      expect(answer.text, target).toContain('"MISSING_KEY"')
    }
    expect(upstream.seen).toEqual([])
  })

  it('answers GET and HEAD only: any other method on a page is forwarded as any request, the key checked', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS']) {
      expect((await raw(proxyUrl, '/docs/errors/FORBIDDEN', method, 'content-length: 0\r\n')).status, method).toBe(401)
      const withKey = await request(`${proxyUrl}/docs/errors/FORBIDDEN`, {
        method: method as 'POST',
        headers: { 'x-api-key': key },
      })
      expect(((await withKey.body.json()) as { method: string; url: string }).url, method).toBe(
        '/docs/errors/FORBIDDEN',
      )
    }
  })

  it('leaves /docs/errors to the upstream when DOCS_BASE_URL is a URL: the links point there', async () => {
    const url = await startProxy('https://keygate.example.com/docs')
    expect((await raw(url, '/docs/errors/FORBIDDEN')).status).toBe(401)
    const withKey = await request(`${url}/docs/errors/FORBIDDEN`, { headers: { 'x-api-key': key } })
    expect(withKey.statusCode).toBe(200)
    expect(((await withKey.body.json()) as { url: string }).url).toBe('/docs/errors/FORBIDDEN')
  })

  it('sends each page with its request id, counted and timed as every answer of its own', async () => {
    const registry = new Registry()
    const url = await startProxy('/docs', registry)
    const pages = [
      await request(`${url}/docs/errors/FORBIDDEN`),
      await request(`${url}/docs/errors`, { method: 'HEAD' }),
    ]
    for (const page of pages) {
      await page.body.dump()
      expect(page.statusCode).toBe(200)
      expect(page.headers['x-request-id']).toMatch(/^[A-Za-z0-9._-]+$/)
    }
    expect(pages[0]!.headers['x-request-id']).not.toBe(pages[1]!.headers['x-request-id'])
    const exposition = await registry.metrics()
    expect(exposition).toContain('keygate_proxy_requests_total{status="200",source="keygate"} 2')
    expect(exposition).toContain('keygate_proxy_request_duration_seconds_count{status="200",source="keygate"} 2')
  })
})
