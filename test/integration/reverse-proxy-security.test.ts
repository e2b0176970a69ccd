import { request as httpRequest, type Server } from 'node:http'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pino } from 'pino'
import { Registry } from 'prom-client'
import { newId } from '../../shared/ids.js'
import { generateKey } from '../../shared/keys/key-material.js'
import { createReverseProxy, type ReverseProxy } from '../../verifier/proxy-server.js'
import { openBackend, startTestVerifier, type Backend, type TestServer } from '../support/apps.js'
import { startEchoUpstream, type EchoUpstream } from '../support/echo-upstream.js'

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  return typeof address === 'object' && address ? address.port : 0
}

/** Sends raw bytes and returns the raw answer: for requests no HTTP client would send. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request))
    let answer = ''
    socket.on('data', (chunk) => (answer += String(chunk)))
    socket.on('end', () => resolve(answer))
    socket.on('error', reject)
    setTimeout(() => socket.destroy(), 3_000).unref()
  })
}

function parse(answer: string) {
  const [head = '', body = ''] = answer.split('\r\n\r\n')
  return {
    status: Number(head.split(' ')[1]),
    contentType: /content-type: ([^\r\n]+)/i.exec(head)?.[1],
    requestId: /x-request-id: (\S+)/i.exec(head)?.[1],
    body,
  }
}

/** Sends one request with exactly these headers (node adds Host and Connection) and resolves with its status. */
function send(port: number, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
    req.end()
  })
}

/** What a client could do to reach past the proxy: send its key on, forge its address, speak broken HTTP. */
describe('reverse-proxy mode against a hostile client', () => {
  let backend: Backend
  let verifierServer: TestServer
  let upstream: EchoUpstream
  const proxies: ReverseProxy[] = []
  let port: number
  let proxyUrl: string
  let key: string
  /** Another key of the same api: a credential the proxy did not verify, in a request it authenticated by `key`. */
  let secondKey: string
  let apiId: string

  function startProxy(docsBaseUrl: string, passAuthorization?: boolean): ReverseProxy {
    const proxy = createReverseProxy({
      verifier: verifierServer.verifier,
      policy: { keyHeader: 'x-api-key', cost: 1, apiId },
      log: pino({ level: 'silent' }),
      registry: new Registry(),
      options: { upstreamUrl: upstream.url, connections: 2, timeoutMs: 5_000, docsBaseUrl, passAuthorization },
    })
    proxies.push(proxy)
    return proxy
  }

  beforeAll(async () => {
    backend = await openBackend()
    apiId = newId('api')
    await backend.store.keys.createApi({ id: apiId, name: 'proxied', createdAt: Date.now() })
    const issue = async () => {
      const { hash, start, key } = generateKey('sk')
      await backend.store.keys.createKey({ id: newId('key'), hash, start, apiId, enabled: true, createdAt: Date.now() })
      return key
    }
    key = await issue()
    secondKey = await issue()
    verifierServer = await startTestVerifier({ backend })
    upstream = await startEchoUpstream()
    port = await listen(startProxy('https://keygate.dev/docs').server)
    proxyUrl = `http://127.0.0.1:${port}`
  })
  afterAll(async () => {
    await Promise.all(proxies.map((proxy) => proxy.close()))
    await upstream.stop()
    await verifierServer.close()
    await backend.close()
  })

  /** The headers the upstream got for one request through the proxy (which must have been forwarded). */
  async function forwarded(headers: Record<string, string>) {
    const before = upstream.seen.length
    const response = await fetch(`${proxyUrl}/x`, { headers })
    expect(response.status).toBe(200)
    return upstream.seen[before]!.headers
  }

  it('forwards no header that carries the verified key, whichever header it was read from', async () => {
    const both = await forwarded({ 'x-api-key': key, authorization: `Bearer ${key}` })
    expect(both.authorization).toBeUndefined()
    expect(JSON.stringify(both)).not.toContain(key)

    // Read from Authorization (the key header is blank): the blank key header and every copy of the key are removed.
    const fromBearer = await forwarded({
      'x-api-key': ' ',
      authorization: `bearer  ${key}`,
      'x-client-key': key,
      cookie: `session=s1; key=${key}`,
      'x-forwarded-for': `198.51.100.1, ${key}`,
    })
    expect(fromBearer).not.toHaveProperty('x-api-key')
    expect(fromBearer).not.toHaveProperty('x-client-key')
    expect(fromBearer).not.toHaveProperty('cookie')
    // A client's X-Forwarded-For holding the key is dropped like any such header: only the proxy's entry remains.
    expect(fromBearer['x-forwarded-for']).toBe('127.0.0.1')
    expect(JSON.stringify(fromBearer)).not.toContain(key)

    // Anything else in Authorization is a credential the proxy did not verify: not passed on either.
    const own = await forwarded({ 'x-api-key': key, authorization: 'Bearer upstream-session-token' })
    expect(own).not.toHaveProperty('authorization')
    expect(JSON.stringify(own)).not.toContain(key)
  })

  /** What the upstream received of one request sent through the proxy at `at` (which must have forwarded it). */
  async function arrived(path: string, headers: Record<string, string>, at = port) {
    const before = upstream.seen.length
    expect(await send(at, path, headers)).toBe(200)
    return upstream.seen[before]!
  }

  // What the upstream gets beside the client's own headers: node's Host and Connection, and the proxy's.
  const ARRIVING = [
    'connection',
    'host',
    'x-forwarded-for',
    'x-forwarded-host',
    'x-forwarded-proto',
    'x-keygate-key-id',
    'x-real-ip',
    'x-request-id',
  ]
  const names = (headers: object) => Object.keys(headers).sort()

  it('passes on no Authorization from a request it authenticated: a second key, Basic base64(user:key), any scheme', async () => {
    const basic = `Basic ${Buffer.from(`user:${key}`).toString('base64')}`
    for (const authorization of [`Bearer ${secondKey}`, basic, 'Bearer upstream-session-token', 'Digest x']) {
      const seen = await arrived('/x', { 'x-api-key': key, authorization, 'x-custom': 'kept' })
      expect(names(seen.headers), authorization).toEqual([...ARRIVING, 'x-custom'].sort())
    }
    // The key in Authorization and a second one in the key header: both are removed.
    const swapped = await arrived('/x', { authorization: `Bearer ${key}`, 'x-api-key': ' ', 'x-custom': 'kept' })
    expect(names(swapped.headers)).toEqual([...ARRIVING, 'x-custom'].sort())
  })

  it('passes Authorization on with passAuthorization, unless it holds the key', async () => {
    const passing = await listen(startProxy('https://keygate.dev/docs', true).server)
    const basic = `Basic ${Buffer.from('user:upstream-password').toString('base64')}`
    for (const authorization of ['Bearer upstream-session-token', basic]) {
      const seen = await arrived('/x', { 'x-api-key': key, authorization }, passing)
      expect(names(seen.headers), authorization).toEqual([...ARRIVING, 'authorization'].sort())
      expect(seen.headers.authorization).toBe(authorization)
    }
    const holdingKey: Record<string, string>[] = [
      { authorization: `Bearer ${key}` },
      { 'x-api-key': key, authorization: `Bearer ${key}` },
      { 'x-api-key': key, authorization: `Basic ${Buffer.from(`user:${key}`).toString('base64')}` },
    ]
    for (const headers of holdingKey) {
      const seen = await arrived('/x', headers, passing)
      expect(names(seen.headers)).toEqual(ARRIVING)
    }
  })

  it('removes from the query every parameter holding the verified key, as sent or encoded; the path is passed as sent', async () => {
    const encoded = [...key].map((char) => `%${char.charCodeAt(0).toString(16)}`).join('')
    for (const [sent, expected] of [
      [`/x?api_key=${key}&page=2`, '/x?page=2'],
      [`/x?page=2&api_key=${key}`, '/x?page=2'],
      [`/x?api_key=${key}`, '/x'],
      [`/x?${key}&a=1&b`, '/x?a=1&b'],
      [`/x?token=${encoded}&q=a+b`, '/x?q=a+b'],
      [`/x?token=${encoded}`, '/x'],
      [`/x?t=%FF${encoded}&q=1`, '/x?q=1'],
      ['/x?q=a+b&n=%41&m=%E2%82%AC&bad=%ZZ', '/x?q=a+b&n=%41&m=%E2%82%AC&bad=%ZZ'],
      [`/keys/${key}?a=1`, `/keys/${key}?a=1`],
    ]) {
      const seen = await arrived(sent!, { 'x-api-key': key })
      expect(seen.url, sent).toBe(expected)
    }
    // The key is read from headers only: in the query alone it authenticates nothing, and nothing is forwarded.
    const before = upstream.seen.length
    expect(await send(port, `/x?api_key=${key}`, {})).toBe(401)
    expect(upstream.seen.length).toBe(before)
  })

  it('names the socket’s address in X-Real-IP (never the client’s own) and appends it to X-Forwarded-For', async () => {
    const claimed = await forwarded({ 'x-api-key': key, 'x-real-ip': '203.0.113.9', 'x-forwarded-for': '198.51.100.1' })
    expect(claimed['x-real-ip']).toBe('127.0.0.1')
    // The client's list is kept ahead of the address the proxy saw: only the last entry is the proxy's word.
    expect(claimed['x-forwarded-for']).toBe('198.51.100.1, 127.0.0.1')

    const plain = await forwarded({ 'x-api-key': key })
    expect(plain['x-real-ip']).toBe('127.0.0.1')
    expect(plain['x-forwarded-for']).toBe('127.0.0.1')
  })

  it('answers malformed HTTP in the contract’s error shape with a request id, its docs at the configured base', async () => {
    const before = upstream.seen.length
    const malformed = parse(await raw(port, 'GET /x HTTP/1.1\r\nHost: x\r\nthis is not a header\r\n\r\n'))
    expect(malformed.status).toBe(400)
    expect(malformed.contentType).toBe('application/json; charset=utf-8')
    expect(malformed.requestId).toMatch(/^req_/)
    expect(JSON.parse(malformed.body)).toEqual({
      error: {
        code: 'BAD_REQUEST',
        message: 'the request is not well-formed HTTP',
        docs: 'https://keygate.dev/docs/errors/BAD_REQUEST',
        requestId: malformed.requestId,
      },
    })

    const huge = parse(await raw(port, `GET /x HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`))
    expect(huge.status).toBe(431)
    expect(JSON.parse(huge.body)).toMatchObject({
      error: { code: 'REQUEST_HEADER_FIELDS_TOO_LARGE', requestId: huge.requestId },
    })

    // A docs base that is a path is served at the address the client reached (no Host header was parsed).
    const pathDocs = await listen(startProxy('/docs').server)
    const local = parse(await raw(pathDocs, 'GET /x HTTP/1.1\r\nbroken\r\n\r\n'))
    expect(JSON.parse(local.body)).toMatchObject({
      error: { code: 'BAD_REQUEST', docs: `http://127.0.0.1:${pathDocs}/docs/errors/BAD_REQUEST` },
    })
    expect(upstream.seen.length).toBe(before)
  })
})
