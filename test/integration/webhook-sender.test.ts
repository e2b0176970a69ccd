import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { EndpointSender, SNIPPET_BYTES } from '../../control-plane/webhooks/delivery/endpoint-sender.js'

const TIMEOUT_MS = 1_000

/** A real endpoint on this machine, answering with `handle`; what it was sent is counted. */
async function endpointServer(handle: (request: IncomingMessage, response: ServerResponse) => void) {
  let requests = 0
  const server = createServer((request, response) => {
    requests++
    request.resume()
    handle(request, response)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    requests: () => requests,
    stop: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/**
 * What EndpointSender does with answers a hostile or broken endpoint gives: it sends, reads a capped snippet, and is
 * done within its deadline, whatever comes back. (Addresses: webhook-worker.test.ts and checked-lookup.test.ts.)
 */
describe('EndpointSender against endpoints that answer badly', () => {
  const sender = new EndpointSender({ allowPrivateAddresses: true, timeoutMs: TIMEOUT_MS })
  const servers: { stop(): Promise<void> }[] = []
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()))
  })

  it('follows no redirect: the 3xx is the answer', async () => {
    const target = await endpointServer((_, response) => response.writeHead(204).end())
    const redirecting = await endpointServer((_, response) => response.writeHead(307, { location: target.url }).end())
    servers.push(target, redirecting)
    const answer = await sender.send(redirecting.url, {}, '{}')
    expect(answer.status).toBe(307)
    expect(target.requests()).toBe(0)
  })

  it(`reads ${SNIPPET_BYTES} bytes of an endless answer and stops there`, async () => {
    let writing = true
    const endless = await endpointServer((_, response) => {
      response.writeHead(200)
      const more = () => {
        while (writing && response.write('x'.repeat(16_384)));
        if (writing) response.once('drain', more)
      }
      response.on('close', () => (writing = false))
      more()
    })
    servers.push(endless)
    const answer = await sender.send(endless.url, {}, '{}')
    writing = false
    expect(answer).toMatchObject({ status: 200, snippet: 'x'.repeat(SNIPPET_BYTES) })
    expect(answer.latencyMs).toBeLessThan(TIMEOUT_MS)
  })

  // A 2xx is the delivery; the body is only read for the log: one that trickles in ends at the deadline, the
  // delivery counted as made (not sent again), with what came of the body.
  it('is done by its deadline with an answer whose body trickles, keeping its status', async () => {
    const trickles: NodeJS.Timeout[] = []
    const trickling = await endpointServer((_, response) => {
      response.writeHead(200)
      trickles.push(setInterval(() => response.write('.'), 50))
    })
    servers.push(trickling)
    try {
      const started = Date.now()
      const answer = await sender.send(trickling.url, {}, '{}')
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 500)
      expect(answer.status).toBe(200)
      expect(answer.snippet).toMatch(/^\.+$/)
    } finally {
      for (const trickle of trickles) clearInterval(trickle)
    }
  })
})
