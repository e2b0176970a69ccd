import { createServer } from 'node:http'

/** The API behind the proxy: node:http answering a small JSON body, about as cheap as an upstream gets in Node. */
const BODY = JSON.stringify({ hello: 'world' })
createServer((request, response) => {
  request.resume()
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY) })
    response.end(BODY)
  })
}).listen(Number(process.env.PORT), '127.0.0.1')
// SIGTERM (the bench's stop) exits normally, so a --cpu-prof profile gets written.
process.on('SIGTERM', () => process.exit(0))
