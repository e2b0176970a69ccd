import { createServer } from 'node:http'

/**
 * The floor under every contender: node:http reading the body, JSON.parse, and a constant verdict — no framework,
 * no validation, no metrics. Used by the instruction-count scenario to show what the HTTP layer itself costs.
 */
const VERDICT = JSON.stringify({
  keyId: 'key_3ZtWQ4dJ8Fq1',
  valid: true,
  code: 'VALID',
  enabled: true,
  requestId: 'req_3ZtWQ4dJ8Fq1',
})
createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    if (request.url === '/readyz') {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 })
      response.end('{}')
      return
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { key?: unknown }
    if (typeof body.key !== 'string') throw new Error('no key')
    response.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(VERDICT),
    })
    response.end(VERDICT)
  })
}).listen(Number(process.env.PORT), '127.0.0.1')
process.on('SIGTERM', () => process.exit(0))
