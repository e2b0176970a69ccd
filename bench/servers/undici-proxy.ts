import { createServer, type IncomingHttpHeaders } from 'node:http'
import { Pool } from 'undici'

/**
 * The proxy baseline: node:http passing every request through one undici Pool to UPSTREAM_URL and the answer
 * back, verifying nothing. What any Node reverse proxy pays at least; keygate's proxy is judged by CPU against it
 * (calling the API directly shares the core with the API and cannot separate the two).
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

createServer((req, res) => {
  if (req.url === '/readyz') {
    res.writeHead(200, { 'content-length': 2 }).end('{}')
    return
  }
  const hasBody = req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0'
  pool
    .request({
      method: req.method as 'GET',
      path: req.url!,
      headers: passedOn(req.headers),
      body: hasBody ? req : undefined,
    })
    .then((upstream) => {
      res.writeHead(upstream.statusCode, passedOn(upstream.headers))
      upstream.body.pipe(res)
    })
    .catch(() => {
      if (!res.headersSent) res.writeHead(502)
      res.end()
    })
}).listen(Number(process.env.PORT), '127.0.0.1')
process.on('SIGTERM', () => process.exit(0))
