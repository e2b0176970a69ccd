import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import { Pool, type Dispatcher } from 'undici'

/**
 * A second proxy baseline, reported beside the first (undici-proxy.ts): node:http passing every request through
 * undici's dispatch API, each chunk written straight to the client — the technique keygate's proxy uses (rather than
 * request() + pipe). Keygate ÷ this is what verifying costs a proxy built the same way.
 */
const pool = new Pool(process.env.UPSTREAM_URL!, { connections: 128 })
// Hop-by-hop headers are the connection's, not the request's (RFC 9110 §7.6.1): a proxy never passes them on.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'host',
])

function passedOn(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const name in headers) if (!HOP_BY_HOP.has(name)) out[name] = headers[name]!
  return out
}

class Relay implements Dispatcher.DispatchHandler {
  private started = false
  constructor(private readonly res: ServerResponse) {}
  // undici tells its handler APIs apart by this method: without it the handler is taken for an old-style one.
  onRequestStart() {}
  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders) {
    if (statusCode < 200) return
    this.started = true
    this.res.writeHead(statusCode, passedOn(headers))
  }
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer) {
    if (!this.res.write(chunk)) {
      controller.pause()
      this.res.once('drain', () => controller.resume())
    }
  }
  onResponseEnd() {
    this.res.end()
  }
  onResponseError() {
    if (this.started) return void this.res.destroy()
    this.res.writeHead(502)
    this.res.end()
  }
}

createServer((req, res) => {
  if (req.url === '/readyz') {
    res.writeHead(200, { 'content-length': 2 }).end('{}')
    return
  }
  const hasBody = req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0'
  pool.dispatch(
    {
      method: req.method as Dispatcher.HttpMethod,
      path: req.url!,
      headers: passedOn(req.headers),
      body: hasBody ? req : undefined,
    },
    new Relay(res),
  )
}).listen(Number(process.env.PORT), '127.0.0.1')
process.on('SIGTERM', () => process.exit(0))
