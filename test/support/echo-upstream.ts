import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'

export interface SeenRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}

export interface EchoUpstream {
  url: string
  server: Server
  seen: SeenRequest[]
  stop(): Promise<void>
}

/** A real upstream on port 0 that records each request and answers it as JSON (200, or /__status/<code>). */
export async function startEchoUpstream(): Promise<EchoUpstream> {
  const seen: SeenRequest[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      }
      seen.push(request)
      // /__status/<code> answers with that status (an API's own errors, to see a gateway pass them on).
      const status = Number(/^\/__status\/(\d{3})/.exec(request.url)?.[1] ?? 200)
      res.writeHead(status, { 'content-type': 'application/json', 'x-upstream': 'echo' })
      res.end(JSON.stringify({ method: request.method, url: request.url, bodyLength: request.body.length }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    seen,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
