import { createHash } from 'node:crypto'
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { connect, createServer as createNetServer, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { pino } from 'pino'
import { Registry, type Histogram } from 'prom-client'
import { newId } from '../../shared/ids.js'
import { generateKey } from '../../shared/keys/key-material.js'
import type { KeyVerifier } from '../../verifier/key-verifier.js'
import { createReverseProxy, type ReverseProxy } from '../../verifier/proxy-server.js'
import { capturedLogger, openBackend, startTestVerifier, type Backend, type TestServer } from '../support/apps.js'
import { startEchoUpstream, type EchoUpstream } from '../support/echo-upstream.js'
import { freePort } from '../support/free-port.js'
import { nothingHappensFor } from '../support/nothing-happens.js'
import { waitFor } from '../support/wait-for.js'

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
}

type Labels = Partial<Record<string, string | number>>
const seriesId = (labels: Labels, ...names: string[]) => names.map((name) => labels[name]).join(' ')

/** keygate_proxy_requests_total by "source status". */
async function counted(registry: Registry): Promise<Record<string, number>> {
  const { values } = await registry.getSingleMetric('keygate_proxy_requests_total')!.get()
  return Object.fromEntries(values.map(({ labels, value }) => [seriesId(labels, 'source', 'status'), value]))
}

/** keygate_proxy_request_duration_seconds: count and sum by "source status", buckets by "source status le". */
async function histogram(registry: Registry) {
  const { values } = await (registry.getSingleMetric('keygate_proxy_request_duration_seconds') as Histogram).get()
  const part = (suffix: string, ...names: string[]) =>
    Object.fromEntries(
      values
        .filter((value) => value.metricName === `keygate_proxy_request_duration_seconds_${suffix}`)
        .map(({ labels, value }) => [seriesId(labels, ...names), value]),
    )
  return {
    count: part('count', 'source', 'status'),
    sum: part('sum', 'source', 'status'),
    buckets: part('bucket', 'source', 'status', 'le'),
  }
}

describe('reverse-proxy mode', () => {
  let backend: Backend
  let verifierServer: TestServer
  let upstream: EchoUpstream
  let proxy: ReverseProxy
  let proxyUrl: string
  let apiId: string
  let valid: { key: string; keyId: string }
  let disabledKey: string
  let otherApiKey: string
  let otherApiId: string
  const extraProxies: ReverseProxy[] = []
  const extraServers: Server[] = []

  async function issue(api: string, enabled = true, ownerId?: string) {
    const { key, hash, start } = generateKey('sk')
    const keyId = newId('key')
    await backend.store.keys.createKey({ id: keyId, hash, start, apiId: api, enabled, ownerId, createdAt: Date.now() })
    return { key, keyId }
  }

  async function proxyTo(upstreamUrl: string, timeoutMs: number): Promise<string> {
    return proxyToWith(upstreamUrl, {}, 4, timeoutMs)
  }

  async function proxyToWith(
    upstreamUrl: string,
    policy: { permissions?: string[] },
    connections = 4,
    timeoutMs = 5_000,
  ): Promise<string> {
    const extra = createReverseProxy({
      verifier: verifierServer.verifier,
      policy: { keyHeader: 'x-api-key', cost: 1, apiId, ...policy },
      log: pino({ level: 'silent' }),
      registry: new Registry(),
      options: { upstreamUrl, connections, timeoutMs, docsBaseUrl: 'https://keygate.dev/docs' },
    })
    extraProxies.push(extra)
    return listen(extra.server)
  }

  /** A proxy with a registry of its own, to read its metrics. */
  async function meteredProxyTo(
    upstreamUrl: string,
    { connections = 2, timeoutMs = 2_000, verifier = verifierServer.verifier } = {},
  ): Promise<{ url: string; registry: Registry; proxy: ReverseProxy }> {
    const registry = new Registry()
    const extra = createReverseProxy({
      verifier,
      policy: { keyHeader: 'x-api-key', cost: 1, apiId },
      log: pino({ level: 'silent' }),
      registry,
      options: { upstreamUrl, connections, timeoutMs, docsBaseUrl: 'https://keygate.dev/docs' },
    })
    extraProxies.push(extra)
    return { url: await listen(extra.server), registry, proxy: extra }
  }

  /** A raw request through the proxy that the test can walk away from at any moment (errors are expected). */
  function rawRequest(url: string, path: string, options: { method?: string; headers?: Record<string, string> } = {}) {
    const { port } = new URL(url)
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path,
      method: options.method ?? 'GET',
      headers: options.headers,
    })
    req.on('error', () => {})
    return req
  }

  beforeAll(async () => {
    backend = await openBackend()
    apiId = newId('api')
    const otherApi = newId('api')
    otherApiId = otherApi
    for (const id of [apiId, otherApi])
      await backend.store.keys.createApi({ id, name: 'proxied', createdAt: Date.now() })
    valid = await issue(apiId, true, 'acme')
    disabledKey = (await issue(apiId, false)).key
    otherApiKey = (await issue(otherApi)).key
    verifierServer = await startTestVerifier({ backend })
    upstream = await startEchoUpstream()
    proxy = createReverseProxy({
      verifier: verifierServer.verifier,
      policy: { keyHeader: 'x-api-key', cost: 1, apiId },
      log: pino({ level: 'silent' }),
      registry: new Registry(),
      options: { upstreamUrl: upstream.url, connections: 8, timeoutMs: 5_000, docsBaseUrl: 'https://keygate.dev/docs' },
    })
    proxyUrl = await listen(proxy.server)
  })
  afterAll(async () => {
    await Promise.all([proxy, ...extraProxies].map((p) => p.close()))
    for (const server of extraServers) {
      server.closeAllConnections()
      server.close()
    }
    await upstream.stop()
    await verifierServer.close()
    await backend.close()
  })

  it('forwards method, path, query, headers and a streamed body, with who the key is, and without the key', async () => {
    const body = Buffer.alloc(3 * 1024 * 1024, 'k')
    const before = upstream.seen.length
    const response = await fetch(`${proxyUrl}/v2/orders/17?expand=items&x=1`, {
      method: 'PUT',
      headers: {
        'x-api-key': valid.key,
        'content-type': 'application/octet-stream',
        'x-custom': 'kept',
        'x-keygate-key-id': 'forged',
        'x-request-id': 'trace-123',
      },
      body,
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-upstream')).toBe('echo')
    expect(response.headers.get('x-request-id')).toBe('trace-123')
    expect(await response.json()).toEqual({
      method: 'PUT',
      url: '/v2/orders/17?expand=items&x=1',
      bodyLength: body.length,
    })
    const seen = upstream.seen[before]!
    expect(createHash('sha256').update(seen.body).digest('hex')).toBe(createHash('sha256').update(body).digest('hex'))
    expect(seen.headers).toMatchObject({
      'x-custom': 'kept',
      'x-keygate-key-id': valid.keyId,
      'x-keygate-owner-id': 'acme',
      'x-request-id': 'trace-123',
    })
    expect(seen.headers['x-api-key']).toBeUndefined()
    expect(JSON.stringify(seen.headers)).not.toContain(valid.key)
  })

  it('strips Authorization, whether or not it carried the key, and strips hop-by-hop headers both ways', async () => {
    const before = upstream.seen.length
    await fetch(`${proxyUrl}/a`, { headers: { authorization: `Bearer ${valid.key}` } })
    expect(upstream.seen[before]!.headers.authorization).toBeUndefined()
    await fetch(`${proxyUrl}/b`, { headers: { 'x-api-key': valid.key, authorization: 'Basic app-level-credentials' } })
    expect(upstream.seen[before + 1]!.headers.authorization).toBeUndefined()

    // Raw request: a Connection-named header and other hop-by-hop headers never reach the upstream.
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        `${proxyUrl}/c`,
        {
          headers: {
            'x-api-key': valid.key,
            connection: 'keep-alive, x-hop',
            'x-hop': 'secret-hop',
            'proxy-authorization': 'x',
            te: 'trailers',
          },
        },
        (res) => {
          res.resume()
          res.on('end', resolve)
        },
      )
      req.on('error', reject)
      req.end()
    })
    const hop = upstream.seen[before + 2]!.headers
    expect(hop['x-hop']).toBeUndefined()
    expect(hop['proxy-authorization']).toBeUndefined()
    expect(hop.te).toBeUndefined()
  })

  it('refuses like forward-auth, in the contract shape with one code (header and body), without calling the upstream', async () => {
    const before = upstream.seen.length
    const strictUrl = await proxyToWith(upstream.url, { permissions: ['orders.read'] })
    const cases: [string, Record<string, string>, number, string, RegExp][] = [
      [proxyUrl, {}, 401, 'MISSING_KEY', /send it in the x-api-key header, or as Authorization: Bearer <key>/],
      [proxyUrl, { 'x-api-key': 'sk_never_issued_000000' }, 401, 'NOT_FOUND', /key in the x-api-key header/],
      [proxyUrl, { authorization: 'Bearer sk_never_issued_000000' }, 401, 'NOT_FOUND', /Authorization: Bearer/],
      [proxyUrl, { 'x-api-key': disabledKey }, 401, 'DISABLED', /disabled/],
      [proxyUrl, { 'x-api-key': otherApiKey }, 403, 'FORBIDDEN', /another api/],
      [strictUrl, { 'x-api-key': valid.key }, 403, 'INSUFFICIENT_PERMISSIONS', /lacks a permission/],
    ]
    for (const [url, headers, status, code, message] of cases) {
      const response = await fetch(`${url}/orders`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: '{"a":1}',
      })
      expect(response.status, code).toBe(status)
      expect(response.headers.get('x-keygate-code')).toBe(code)
      const body = (await response.json()) as { error: Record<string, string> }
      expect(body.error).toMatchObject({
        code,
        message: expect.stringMatching(message),
        docs: `https://keygate.dev/docs/errors/${code}`,
        requestId: response.headers.get('x-request-id'),
      })
      if (status === 401) expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/)
    }
    expect(upstream.seen.length).toBe(before)
  })

  it('is not built without an api to check keys against, unless told to take any api (and says so)', async () => {
    const options = { upstreamUrl: upstream.url, connections: 1, timeoutMs: 1_000, docsBaseUrl: 'https://d' }
    const build = (policy: { apiId?: string; anyApi?: boolean }, log = pino({ level: 'silent' })) =>
      createReverseProxy({
        verifier: verifierServer.verifier,
        policy: { keyHeader: 'x-api-key', cost: 1, ...policy },
        log,
        registry: new Registry(),
        options,
      })
    expect(() => build({})).toThrow(/needs the api/)
    expect(() => build({ anyApi: false })).toThrow(/needs the api/)
    const { log, lines } = capturedLogger()
    const anyApi = build({ anyApi: true }, log)
    extraProxies.push(anyApi)
    expect(lines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({ level: 40, msg: expect.stringMatching(/AUTHORIZE_ANY_API/) }),
    )
    const url = await listen(anyApi.server)
    expect((await fetch(`${url}/any`, { headers: { 'x-api-key': otherApiKey } })).status).toBe(200)
  })

  it('passes the upstream’s own status codes and headers through', async () => {
    const teapot = createServer((_req, res) => {
      res.writeHead(418, { 'x-from': 'teapot', 'content-type': 'text/plain' })
      res.end('short and stout')
    })
    extraServers.push(teapot)
    const url = await proxyTo(await listen(teapot), 2_000)
    const response = await fetch(`${url}/`, { headers: { 'x-api-key': valid.key } })
    expect(response.status).toBe(418)
    expect(response.headers.get('x-from')).toBe('teapot')
    expect(await response.text()).toBe('short and stout')
  })

  it('answers 502 BAD_GATEWAY when the upstream is down and 504 GATEWAY_TIMEOUT when it is too slow', async () => {
    const down = await proxyTo(`http://127.0.0.1:${await freePort()}`, 2_000)
    const refused = await fetch(`${down}/x`, { headers: { 'x-api-key': valid.key } })
    expect(refused.status).toBe(502)
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('BAD_GATEWAY')

    const silent = createServer(() => {
      /* never answers */
    })
    extraServers.push(silent)
    const slow = await proxyTo(await listen(silent), 300)
    const started = Date.now()
    const timedOut = await fetch(`${slow}/x`, { headers: { 'x-api-key': valid.key } })
    expect(timedOut.status).toBe(504)
    expect(((await timedOut.json()) as { error: { code: string } }).error.code).toBe('GATEWAY_TIMEOUT')
    expect(Date.now() - started).toBeLessThan(3_000)
  })

  it('ignores policy headers a client sends: the proxy’s own policy decides', async () => {
    // The key's own api named by the client: were the header obeyed, the key would pass.
    const forged = await fetch(`${proxyUrl}/x`, {
      headers: { 'x-api-key': otherApiKey, 'x-keygate-api-id': otherApiId },
    })
    expect(forged.status).toBe(403)
    const strictUrl = await proxyToWith(upstream.url, { permissions: ['orders.read'] })
    for (const permissions of ['', ',', 'anything.else']) {
      const response = await fetch(`${strictUrl}/x`, {
        headers: { 'x-api-key': valid.key, 'x-keygate-permissions': permissions },
      })
      expect(response.status, JSON.stringify(permissions)).toBe(403)
    }
    const before = upstream.seen.length
    await fetch(`${proxyUrl}/y`, {
      headers: { 'x-api-key': valid.key, 'x-forwarded-proto': 'https', forwarded: 'for=1.2.3.4' },
    })
    expect(upstream.seen[before]!.headers['x-forwarded-proto']).toBe('http')
    expect(upstream.seen[before]!.headers.forwarded).toBeUndefined()
  })

  it('forwards uploads sent with Expect: 100-continue (as curl does), again and again, without exhausting the pool', async () => {
    const small = await proxyToWith(upstream.url, {}, 2)
    const { port } = new URL(small)
    for (let i = 0; i < 6; i++) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            path: '/upload',
            method: 'PUT',
            headers: { 'x-api-key': valid.key, expect: '100-continue', 'content-length': '11' },
          },
          (res) => {
            res.resume()
            res.on('end', () => resolve(res.statusCode ?? 0))
          },
        )
        req.on('continue', () => req.end('hello world'))
        req.on('error', reject)
      })
      expect(status, `upload ${i}`).toBe(200)
    }
    expect(upstream.seen.at(-1)).toMatchObject({ method: 'PUT', url: '/upload', body: 'hello world' })
    expect((await fetch(`${small}/after`, { headers: { 'x-api-key': valid.key } })).status).toBe(200)
  })

  it('frees the upstream connection when a client leaves in the middle of a response', async () => {
    // An endless stream on /stream; everything else answers at once. One connection to it in all.
    const streaming = createServer((req, res) => {
      if (req.url !== '/stream') return res.end('quick')
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      const tick = setInterval(() => res.write('data: tick\n\n'), 20)
      res.on('close', () => clearInterval(tick))
    })
    extraServers.push(streaming)
    const url = await proxyToWith(await listen(streaming), {}, 1)
    for (let i = 0; i < 3; i++) {
      const abort = new AbortController()
      const response = await fetch(`${url}/stream`, { headers: { 'x-api-key': valid.key }, signal: abort.signal })
      const reader = response.body!.getReader()
      await reader.read()
      abort.abort()
    }
    const started = Date.now()
    const quick = await fetch(`${url}/quick`, {
      headers: { 'x-api-key': valid.key },
      signal: AbortSignal.timeout(3_000),
    })
    expect(await quick.text()).toBe('quick')
    expect(Date.now() - started).toBeLessThan(3_000)
  })

  it('relays a large body to a slow reader intact, holding the upstream back meanwhile (not buffering it all)', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'k')
    // 64 MiB: loopback sockets on the way (upstream → proxy → client) can hold ~20 MiB between them even when every
    // pause works, so only a body well beyond that tells holding back from buffering it all.
    const chunks = 1024
    let writtenWhenFirstRead = -1
    let written = 0
    const big = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' })
      const more = () => {
        while (written < chunks) {
          written++
          if (!res.write(chunk)) return void res.once('drain', more)
        }
        res.end()
      }
      more()
    })
    extraServers.push(big)
    const url = await proxyTo(await listen(big), 5_000)
    // Each pause waits for one 'drain': listeners piling up on the response would warn past 10.
    const warnings: Error[] = []
    const warned = (warning: Error) => warnings.push(warning)
    process.on('warning', warned)
    const digest = createHash('sha256')
    let bytes = 0
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${url}/big`, { headers: { 'x-api-key': valid.key } }, (res) => {
        expect(res.statusCode).toBe(200)
        // A reader that waits before taking anything: the proxy must pause the upstream rather than read it all.
        res.pause()
        // What must not happen while nothing is read: the upstream writing most of the 64 MiB into the proxy.
        void nothingHappensFor(800).then(() => {
          writtenWhenFirstRead = written
          res.on('data', (data: Buffer) => {
            bytes += data.length
            digest.update(data)
          })
          res.on('end', resolve)
          res.resume()
        })
      })
      req.on('error', reject)
      req.end()
    })
    expect(bytes).toBe(chunk.length * chunks)
    expect(digest.digest('hex')).toBe(
      createHash('sha256')
        .update(Buffer.alloc(chunk.length * chunks, 'k'))
        .digest('hex'),
    )
    // Socket buffers on the way hold some of it, not most of 64 MiB.
    expect(writtenWhenFirstRead).toBeLessThan(chunks / 2)
    await new Promise((resolve) => setImmediate(resolve))
    process.off('warning', warned)
    expect(warnings.map(String)).toEqual([])
  })

  it('cuts off a client that reads nothing for the upstream timeout, freeing its upstream connection', async () => {
    // An endless stream on /stream, written as fast as it is taken; anything else answered at once.
    const closed: string[] = []
    const chunk = Buffer.alloc(64 * 1024, 'n')
    const streaming = createServer((req, res) => {
      res.on('close', () => closed.push(req.url!))
      if (req.url !== '/stream') return res.end('quick')
      res.writeHead(200, { 'content-type': 'application/octet-stream' })
      const more = () => {
        while (!res.destroyed) if (!res.write(chunk)) return void res.once('drain', more)
      }
      more()
    })
    extraServers.push(streaming)
    // One upstream connection, 400 ms without progress allowed.
    const url = await proxyToWith(await listen(streaming), {}, 1, 400)
    const socket = connect(Number(new URL(url).port), '127.0.0.1')
    socket.on('error', () => {})
    let clientClosed = false
    socket.on('close', () => (clientClosed = true))
    socket.write(`GET /stream HTTP/1.1\r\nhost: proxy\r\nx-api-key: ${valid.key}\r\n\r\n`)
    // The first bytes arrive, then the client reads nothing more.
    await new Promise((resolve) => socket.once('data', resolve))
    socket.pause()
    const paused = Date.now()
    await waitFor(() => closed.includes('/stream'), 'the upstream request aborted', 3_000)
    expect(Date.now() - paused).toBeGreaterThanOrEqual(300)
    // The one upstream connection serves the next client.
    const quick = await fetch(`${url}/quick`, {
      headers: { 'x-api-key': valid.key },
      signal: AbortSignal.timeout(3_000),
    })
    expect(await quick.text()).toBe('quick')
    socket.resume()
    await waitFor(() => clientClosed, 'the stalled client cut off', 2_000)
  })

  it('passes on only the final answer after informational ones (103 Early Hints)', async () => {
    const hinting = createServer((_req, res) => {
      res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' })
      res.writeHead(200, { 'x-final': 'yes' })
      res.end('final')
    })
    extraServers.push(hinting)
    const url = await proxyTo(await listen(hinting), 2_000)
    const response = await fetch(`${url}/`, { headers: { 'x-api-key': valid.key } })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-final')).toBe('yes')
    expect(await response.text()).toBe('final')
  })

  it('answers 502 for an upstream’s malformed headers, and cuts a response whose upstream dies mid-body', async () => {
    let dying: Socket | undefined
    const raw = createNetServer((socket) => {
      socket.once('data', (request) => {
        if (String(request).startsWith('GET /bad-header')) {
          // A header value with a control character: undici's parser refuses it (the upstream failed, as for any
          // broken answer). undici refused every byte node:http refuses that was tried (CTLs, DEL, NUL): headers that
          // pass undici and are then refused by writeHead are driven by hand in test/unit/upstream-exchange.test.ts.
          socket.end('HTTP/1.1 200 OK\r\nX-Bad: a\u0001b\r\nContent-Length: 2\r\n\r\nok')
        } else {
          // Dies once the client has the answer's head (below).
          socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial')
          dying = socket
        }
      })
    })
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve))
    const address = raw.address()
    const { url, registry } = await meteredProxyTo(
      `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
    )
    try {
      const bad = await fetch(`${url}/bad-header`, { headers: { 'x-api-key': valid.key } })
      expect(bad.status).toBe(502)
      expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('BAD_GATEWAY')
      const cut = await fetch(`${url}/cut`, { headers: { 'x-api-key': valid.key } })
      expect(cut.status).toBe(200)
      dying!.destroy()
      await expect(cut.text()).rejects.toThrow()
      // The 502 is Keygate's answer, counted and timed as such; the cut response was the upstream's, never finished.
      await waitFor(async () => (await histogram(registry)).count['keygate 502'] === 1, 'the 502 timed')
      expect(await counted(registry)).toEqual({ 'keygate 502': 1, 'upstream 200': 1 })
      expect((await histogram(registry)).count).toEqual({ 'keygate 502': 1 })
    } finally {
      raw.close()
    }
  })

  /** The requests a proxy's server has been handed, by path, until `stop()`: to see what the proxy sees of a client. */
  function atProxy(server: Server) {
    const seen = new Map<string, { req: IncomingMessage; res: ServerResponse }>()
    const record = (req: IncomingMessage, res: ServerResponse) => void seen.set(req.url!, { req, res })
    server.on('request', record)
    return { get: (path: string) => seen.get(path), stop: () => void server.off('request', record) }
  }

  /** Holds every store read of a key by hash until `release()`: `reading` once one has begun. */
  function holdKeyReads() {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const read = backend.store.keys.getKeyByHash.bind(backend.store.keys)
    const held = {
      reading: false,
      release,
      restore: () => void (backend.store.keys.getKeyByHash = read),
    }
    backend.store.keys.getKeyByHash = async (hash: string) => {
      held.reading = true
      await gate
      return read(hash)
    }
    return held
  }

  it('forwards nothing for a client that leaves while its key is being checked', async () => {
    const slow = await issue(apiId)
    // The key is not cached: its check waits on a store read, held here until the client has gone.
    const held = holdKeyReads()
    const proxied = atProxy(proxy.server)
    try {
      const { port } = new URL(proxyUrl)
      const client = httpRequest({ host: '127.0.0.1', port, path: '/left-early', headers: { 'x-api-key': slow.key } })
      client.on('error', () => {})
      client.end()
      await waitFor(() => held.reading, 'the key check to reach the store')
      client.destroy()
      await waitFor(() => proxied.get('/left-early')?.res.destroyed, 'the proxy to see the client leave')
      held.release()
      // What must not happen once the key's read returns: /left-early forwarded upstream.
      await nothingHappensFor(200)
      expect(upstream.seen.some((seen) => seen.url === '/left-early')).toBe(false)
    } finally {
      proxied.stop()
      held.restore()
    }
  })

  it('passes an owner id of any characters as a percent-encoded header, and refuses targets that are not paths', async () => {
    const owned = await issue(apiId, true, '用户-42\n')
    const before = upstream.seen.length
    expect((await fetch(`${proxyUrl}/o`, { headers: { 'x-api-key': owned.key } })).status).toBe(200)
    expect(decodeURIComponent(String(upstream.seen[before]!.headers['x-keygate-owner-id']))).toBe('用户-42\n')
    const { port } = new URL(proxyUrl)
    const star = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, path: '*', method: 'OPTIONS', headers: { 'x-api-key': valid.key } },
        (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        },
      )
      req.on('error', reject)
      req.end()
    })
    expect(star).toBe(400)
  })

  it('counts and times each response by status and by who chose it: Keygate (refusals, 502) or the upstream', async () => {
    // An upstream that takes 60 ms to answer 503: the time through the proxy includes the upstream's.
    const busy = createServer((_req, res) => {
      setTimeout(() => {
        res.writeHead(503)
        res.end('busy')
      }, 60)
    })
    extraServers.push(busy)
    const proxied = await meteredProxyTo(await listen(busy))
    const down = await meteredProxyTo(`http://127.0.0.1:${await freePort()}`)
    expect((await fetch(`${proxied.url}/x`, { headers: { 'x-api-key': valid.key } })).status).toBe(503)
    expect((await fetch(`${proxied.url}/x`, { headers: { 'x-api-key': valid.key } })).status).toBe(503)
    expect((await fetch(`${proxied.url}/x`)).status).toBe(401)
    expect((await fetch(`${down.url}/x`, { headers: { 'x-api-key': valid.key } })).status).toBe(502)

    // Observed once the response is finished, which the proxy learns just after the client has it.
    await waitFor(
      async () => (await histogram(proxied.registry)).count['upstream 503'] === 2,
      'two upstream 503s timed',
    )
    const upstreamSide = await histogram(proxied.registry)
    expect(upstreamSide.count).toEqual({ 'upstream 503': 2, 'keygate 401': 1 })
    expect(await counted(proxied.registry)).toEqual({ 'upstream 503': 2, 'keygate 401': 1 })
    expect(upstreamSide.sum['upstream 503']).toBeGreaterThanOrEqual(0.1)
    expect(upstreamSide.sum['upstream 503']).toBeLessThan(2)
    expect(upstreamSide.buckets['upstream 503 0.05']).toBe(0)
    expect(upstreamSide.buckets['upstream 503 +Inf']).toBe(2)

    await waitFor(async () => (await histogram(down.registry)).count['keygate 502'] === 1, 'the 502 timed')
    expect(await counted(down.registry)).toEqual({ 'keygate 502': 1 })
    expect((await histogram(down.registry)).sum['keygate 502']).toBeGreaterThan(0)
  })

  it('passes on answers without a body (HEAD, 204, 304) with their headers, each counted and timed once', async () => {
    const bodiless = createServer((req, res) => {
      if (req.method === 'HEAD') res.writeHead(200, { 'content-length': '1000', 'x-kind': 'head' })
      else if (req.url === '/204') res.writeHead(204, { 'x-kind': 'none' })
      else res.writeHead(304, { etag: '"v1"' })
      res.end()
    })
    extraServers.push(bodiless)
    const { url, registry } = await meteredProxyTo(await listen(bodiless))
    const headers = { 'x-api-key': valid.key }
    const head = await fetch(`${url}/h`, { method: 'HEAD', headers })
    expect([head.status, head.headers.get('content-length'), head.headers.get('x-kind')]).toEqual([200, '1000', 'head'])
    expect(await head.text()).toBe('')
    const none = await fetch(`${url}/204`, { headers })
    expect([none.status, none.headers.get('x-kind'), await none.text()]).toEqual([204, 'none', ''])
    const unchanged = await fetch(`${url}/304`, { headers: { ...headers, 'if-none-match': '"v1"' } })
    expect([unchanged.status, unchanged.headers.get('etag'), await unchanged.text()]).toEqual([304, '"v1"', ''])
    const expected = { 'upstream 200': 1, 'upstream 204': 1, 'upstream 304': 1 }
    await waitFor(async () => Object.keys((await histogram(registry)).count).length === 3, 'three answers timed')
    expect((await histogram(registry)).count).toEqual(expected)
    expect(await counted(registry)).toEqual(expected)
  })

  it('clients that leave: queued for a connection (never sent), waiting for the answer, mid-upload (aborted at once); none answered or counted', async () => {
    // /hold… requests are held unanswered (their bodies read); anything else is answered at once.
    const seen: string[] = []
    const closed: string[] = []
    const held: ServerResponse[] = []
    const holding = createServer((req, res) => {
      seen.push(req.url!)
      req.resume()
      res.on('close', () => closed.push(req.url!))
      if (req.url!.startsWith('/hold')) held.push(res)
      else res.end('quick')
    })
    extraServers.push(holding)
    const metered = await meteredProxyTo(await listen(holding), { connections: 1, timeoutMs: 10_000 })
    const { url, registry } = metered
    let handled = 0
    metered.proxy.server.on('request', () => handled++)
    const proxied = atProxy(metered.proxy.server)
    const headers = { 'x-api-key': valid.key }

    // The pool's one connection is held by /hold-first: /queued waits for it, and its client leaves meanwhile.
    const first = rawRequest(url, '/hold-first', { headers })
    const firstStatus = new Promise<number>((resolve) =>
      first.on('response', (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      }),
    )
    first.end()
    await waitFor(() => seen.includes('/hold-first'), 'the first request upstream')
    const queued = rawRequest(url, '/queued', { headers })
    queued.end()
    // The key's verdict is cached (the first request's): the request is in the pool's queue once handed over.
    await waitFor(() => handled === 2, 'the queued request at the proxy')
    queued.destroy()
    await waitFor(() => proxied.get('/queued')?.res.destroyed, 'the proxy to see the queued client leave')
    held.shift()!.end('done')
    expect(await firstStatus).toBe(200)
    expect(await (await fetch(`${url}/after`, { headers })).text()).toBe('quick')
    expect(seen).toEqual(['/hold-first', '/after'])

    // Waiting for the upstream's answer, then mid-upload: the upstream request is aborted at once (not at the
    // 10 s timeout).
    const waiting = rawRequest(url, '/hold-waiting', { headers })
    waiting.end()
    await waitFor(() => seen.includes('/hold-waiting'), 'the waiting request upstream')
    waiting.destroy()
    await waitFor(() => closed.includes('/hold-waiting'), 'the waiting request aborted', 2_000)
    const uploading = rawRequest(url, '/hold-upload', {
      method: 'PUT',
      headers: { ...headers, 'content-length': String(1024 * 1024) },
    })
    uploading.write(Buffer.alloc(64 * 1024, 'u'))
    await waitFor(() => seen.includes('/hold-upload'), 'the upload upstream')
    uploading.destroy()
    await waitFor(() => closed.includes('/hold-upload'), 'the upload aborted', 2_000)

    // Only the two answers sent were counted and timed, both the upstream's: nothing answered for the others.
    await waitFor(async () => (await histogram(registry)).count['upstream 200'] === 2, 'two answers timed')
    // What must not happen after the two answers: anything more counted for the clients that left.
    await nothingHappensFor(50)
    expect(await counted(registry)).toEqual({ 'upstream 200': 2 })
    expect((await histogram(registry)).count).toEqual({ 'upstream 200': 2 })
  })

  it('frees the upstream connections of pipelined requests whose client leaves (node:http never closes their responses)', async () => {
    // Endless streams, written as fast as they are taken; anything else answered at once.
    const seen: string[] = []
    const closed: string[] = []
    const chunk = Buffer.alloc(64 * 1024, 's')
    const streaming = createServer((req, res) => {
      seen.push(req.url!)
      res.on('close', () => closed.push(req.url!))
      if (!req.url!.startsWith('/stream')) return res.end('after')
      res.writeHead(200, { 'content-type': 'application/octet-stream' })
      const more = () => {
        while (!res.destroyed) if (!res.write(chunk)) return void res.once('drain', more)
      }
      more()
    })
    extraServers.push(streaming)
    const metered = await meteredProxyTo(await listen(streaming), { connections: 2, timeoutMs: 10_000 })
    let handled = 0
    metered.proxy.server.on('request', () => handled++)
    const port = Number(new URL(metered.url).port)
    const request = (path: string) => `GET ${path} HTTP/1.1\r\nhost: proxy\r\nx-api-key: ${valid.key}\r\n\r\n`
    // A client that stays has its pipelined requests answered in order, in full.
    const staying = connect(port, '127.0.0.1')
    let received = ''
    staying.on('data', (data: Buffer) => (received += String(data)))
    staying.write(request('/quick-1') + request('/quick-2'))
    await waitFor(() => received.split('after').length === 3, 'both pipelined answers')
    staying.destroy()
    handled = 0

    // Three requests on one connection, sent at once: the first is answered, the second's answer waits for the
    // first's (in the proxy), the third waits for a pool connection.
    const socket = connect(port, '127.0.0.1')
    socket.on('error', () => {})
    socket.write(request('/stream-1') + request('/stream-2') + request('/stream-3'))
    await new Promise((resolve) => socket.once('data', resolve))
    await waitFor(() => handled === 3 && seen.includes('/stream-2'), 'all three at the proxy, two upstream')
    socket.destroy()
    await waitFor(
      () => closed.includes('/stream-1') && closed.includes('/stream-2'),
      'both upstream requests aborted',
      2_000,
    )
    const after = await fetch(`${metered.url}/after`, {
      headers: { 'x-api-key': valid.key },
      signal: AbortSignal.timeout(3_000),
    })
    expect(await after.text()).toBe('after')
    expect(seen).not.toContain('/stream-3')
  })

  it('does not cut off a pipelined answer that waits behind a longer one: its client is busy taking that one', async () => {
    // /slow takes 1.5 s, a chunk every 100 ms (well inside the 600 ms upstream timeout); /big comes at once. Pipelined,
    // /big's answer waits in the proxy, its upstream paused, until /slow's is sent: the client reads all along, so
    // the wait is not a stall. (Timed from the pipelined request's arrival, it was cut and the connection with it.)
    const big = Buffer.alloc(256 * 1024, 'b')
    const pipelinedUpstream = createServer((req, res) => {
      if (req.url === '/big') return res.end(big)
      res.writeHead(200, { 'content-type': 'text/plain' })
      let ticks = 0
      const tick = setInterval(() => {
        res.write('tick\n')
        if (++ticks === 15) {
          clearInterval(tick)
          res.end()
        }
      }, 100)
      res.on('close', () => clearInterval(tick))
    })
    extraServers.push(pipelinedUpstream)
    const url = await proxyToWith(await listen(pipelinedUpstream), {}, 4, 600)
    const request = (path: string) => `GET ${path} HTTP/1.1\r\nhost: proxy\r\nx-api-key: ${valid.key}\r\n\r\n`
    const socket = connect(Number(new URL(url).port), '127.0.0.1')
    socket.on('error', () => {})
    let clientClosed = false
    socket.on('close', () => (clientClosed = true))
    let received = ''
    socket.on('data', (data: Buffer) => (received += String(data)))
    socket.write(request('/slow') + request('/big'))
    const bigBody = 'b'.repeat(big.length)
    // /slow's answer is chunked (a chunk a tick), /big's has a content-length.
    const slow = () => received.split('tick\n').length === 16
    const complete = () => slow() && received.endsWith(bigBody)
    await waitFor(() => complete() || clientClosed, 'both answers in full, or the connection cut', 8_000)
    expect({ slow: slow(), big: complete(), clientClosed }).toEqual({
      slow: true,
      big: true,
      clientClosed: false,
    })
    socket.destroy()
  })

  it('answers 500 and goes on serving when checking a key throws, at once or later, counted and timed (never a crash)', async () => {
    const boom = () => {
      throw new Error('boom')
    }
    // A verdict that throws when read: a bug past the key's check, in deciding what to do with its verdict.
    const unreadable = Object.defineProperty({}, 'code', { get: boom })
    const failures = [
      boom,
      () => Promise.reject(new Error('boom')),
      () => unreadable,
      () => Promise.resolve(unreadable),
    ]
    let failure = failures[0]!
    const verifier = { verify: () => failure(), now: () => Date.now() } as unknown as KeyVerifier
    const { url, registry } = await meteredProxyTo(upstream.url, { verifier })
    const before = upstream.seen.length
    for (const [i, next] of failures.entries()) {
      failure = next
      const response = await fetch(`${url}/x`, {
        headers: { 'x-api-key': valid.key },
        signal: AbortSignal.timeout(2_000),
      })
      expect(response.status, `failure ${i}`).toBe(500)
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('INTERNAL_SERVER_ERROR')
    }
    expect(upstream.seen.length).toBe(before)
    await waitFor(async () => (await histogram(registry)).count['keygate 500'] === 4, 'four 500s timed')
    expect(await counted(registry)).toEqual({ 'keygate 500': 4 })
  })

  it('stops forwarding for a key as soon as it is disabled', async () => {
    const key = await issue(apiId)
    expect((await fetch(`${proxyUrl}/d`, { headers: { 'x-api-key': key.key } })).status).toBe(200)
    const record = await backend.store.keys.getKeyById(key.keyId)
    await backend.store.keys.updateKey(key.keyId, { enabled: false }, record!.rev, Date.now())
    expect((await fetch(`${proxyUrl}/d`, { headers: { 'x-api-key': key.key } })).status).toBe(401)
  })

  it('lets go of pipelined answers once sent, while their client stays connected', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const collected = new Set<string>()
    const finalized = new FinalizationRegistry<string>((path) => collected.add(path))
    const { url, proxy: metered } = await meteredProxyTo(upstream.url)
    metered.server.on('request', (req, res) => finalized.register(res, req.url!))
    const socket = connect(Number(new URL(url).port), '127.0.0.1')
    let received = ''
    socket.on('data', (data: Buffer) => (received += String(data)))
    const request = (path: string) => `GET ${path} HTTP/1.1\r\nhost: proxy\r\nx-api-key: ${valid.key}\r\n\r\n`
    socket.write(request('/p-1') + request('/p-2') + request('/p-3') + request('/p-4'))
    await waitFor(() => received.split('HTTP/1.1 200').length === 5, 'four answers')
    // One more request on the same connection, not pipelined: the parser lets go of the earlier ones.
    socket.write(request('/p-5'))
    await waitFor(() => received.split('HTTP/1.1 200').length === 6, 'fifth answer')
    // Collected by a full collection, and then told of by the registry's callbacks, which run later.
    await waitFor(
      () => {
        gc()
        return collected.has('/p-2') && collected.has('/p-3')
      },
      'the pipelined requests collected',
      1_000,
      20,
    ).catch(() => {})
    socket.destroy()
    // The pipelined ones (waiting behind /p-1) are collected although their client is still connected.
    expect([...collected].sort()).toEqual(expect.arrayContaining(['/p-2', '/p-3']))
  })

  it('forwards nothing for pipelined requests whose client leaves while their key is being checked', async () => {
    const slow = await issue(apiId)
    const held = holdKeyReads()
    const proxied = atProxy(proxy.server)
    try {
      const socket = connect(Number(new URL(proxyUrl).port), '127.0.0.1')
      socket.on('error', () => {})
      const request = (path: string) => `GET ${path} HTTP/1.1\r\nhost: proxy\r\nx-api-key: ${slow.key}\r\n\r\n`
      socket.write(request('/left-pipelined-1') + request('/left-pipelined-2'))
      await waitFor(() => held.reading, 'the key check to reach the store')
      await waitFor(() => proxied.get('/left-pipelined-2'), 'both pipelined requests at the proxy')
      socket.destroy()
      await waitFor(() => proxied.get('/left-pipelined-1')?.req.socket.destroyed, 'the proxy to see the client leave')
      held.release()
      // What must not happen once the keys' reads return: either request forwarded upstream.
      await nothingHappensFor(200)
      expect(upstream.seen.filter((seen) => seen.url.startsWith('/left-pipelined')).map((seen) => seen.url)).toEqual([])
    } finally {
      proxied.stop()
      held.restore()
    }
  })
})
