import { connect } from 'node:net'
import { pino } from 'pino'
import { Registry } from 'prom-client'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assembleVerifier } from '../../cli/assemble-verifier.js'
import { monotonicClock, systemClock } from '../../shared/clock.js'
import { CODE_DOCS, DOCUMENTED_CODES, statusesOf, type DocumentedCode } from '../../shared/documented-codes.js'
import type { ErrorCode } from '../../shared/errors.js'
import { GATEWAY_CODES } from '../../shared/gateway-codes.js'
import { newId } from '../../shared/ids.js'
import { generateKey } from '../../shared/key-material.js'
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
