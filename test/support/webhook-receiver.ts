import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { Webhook as SvixWebhook } from 'svix'

/** One request a receiver took, and whether both libraries verified its signature with the receiver's secret. */
export interface ReceivedEvent {
  id: string
  type: string
  data: Record<string, any>
  /** When it arrived, Date.now(). */
  at: number
  verified: boolean
}

/**
 * How the receiver answers: `up` 204 after verifying; `down` 503; `moved` 308 to itself (a redirect is no delivery);
 * `hang` takes the request and never answers (a delivery in the middle of being sent); `flapping` as `up` and `hang`
 * by turns, `up` first.
 */
export type ReceiverMode = 'up' | 'down' | 'moved' | 'hang' | 'flapping'

/**
 * A webhook receiver as users write one: every request verified with `standardwebhooks` and with Svix's library,
 * unchanged. Events are kept only when answered 2xx (`up`); every request is counted in `requests`.
 */
export async function startWebhookReceiver() {
  let secret: string | undefined
  let mode: ReceiverMode = 'up'
  let url = ''
  const events: ReceivedEvent[] = []
  const requests: { at: number; id: string; mode: ReceiverMode }[] = []
  const hanging = new Set<() => void>()
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const id = String(request.headers['webhook-id'])
      const answer = mode === 'flapping' ? (requests.length % 2 === 0 ? 'up' : 'hang') : mode
      requests.push({ at: Date.now(), id, mode: answer })
      if (answer === 'hang') {
        hanging.add(() => response.destroy())
        return
      }
      if (answer === 'down') {
        response.writeHead(503).end('down for maintenance')
        return
      }
      if (answer === 'moved') {
        response.writeHead(308, { location: url }).end('moved for good')
        return
      }
      const verified = secret !== undefined && verifiesWithBoth(secret, body, request.headers)
      const payload = JSON.parse(body) as { type: string; data: Record<string, any> }
      events.push({ id, type: payload.type, data: payload.data, at: Date.now(), verified })
      response.writeHead(verified ? 204 : 401).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  url = `http://127.0.0.1:${port}/hooks`
  return {
    url,
    events,
    requests,
    /** The endpoint's secret, as createEndpoint answered it. */
    useSecret(value: string) {
      secret = value
    },
    setMode(next: ReceiverMode) {
      mode = next
      // Requests held by `hang` are cut off (the sender sees a reset), as when a receiver restarts.
      if (next !== 'hang') {
        for (const drop of hanging) drop()
        hanging.clear()
      }
    },
    async stop() {
      for (const drop of hanging) drop()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

function verifiesWithBoth(secret: string, body: string, headers: IncomingHttpHeaders): boolean {
  const signed = {
    'webhook-id': String(headers['webhook-id']),
    'webhook-timestamp': String(headers['webhook-timestamp']),
    'webhook-signature': String(headers['webhook-signature']),
  }
  try {
    new StandardWebhook(secret).verify(body, signed)
    new SvixWebhook(secret).verify(body, signed)
    return true
  } catch {
    return false
  }
}
