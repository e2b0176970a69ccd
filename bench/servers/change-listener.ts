import { createServer } from 'node:http'
import { Redis } from 'ioredis'
import { parseChangeEvent } from '../../shared/change-event.js'
import { wallMicros } from '../../shared/clock.js'
import { redisKeys } from '../../shared/store/redis/redis-keys.js'

/**
 * The propagation bench's raw pub/sub baseline: a plain subscriber on keygate's change channel, pinned to the
 * verifiers' core, that notes for each event how long after its publish (the `at` Redis stamped in the write
 * script) the message reached it — by the same clock arithmetic the verifiers use for
 * keygate_change_propagation_seconds, and nothing else. GET /latencies answers the microseconds noted since
 * the last POST /reset.
 */
const subscriber = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
let latencies: number[] = []
let ready = false
subscriber.on('message', (_channel: string, message: string) => {
  const now = wallMicros()
  const event = parseChangeEvent(message)
  if (event?.at !== undefined) latencies.push(Math.max(0, now - event.at))
})
await subscriber.subscribe(redisKeys.changesChannel)
ready = true

createServer((request, response) => {
  request.resume()
  const send = (status: number, body: unknown) => {
    const text = JSON.stringify(body)
    response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
    response.end(text)
  }
  if (request.url === '/readyz') send(ready ? 200 : 503, { ready })
  else if (request.url === '/latencies') send(200, latencies)
  else if (request.url === '/reset' && request.method === 'POST') send(200, { dropped: (latencies = []).length })
  else send(404, {})
}).listen(Number(process.env.PORT), '127.0.0.1')
process.on('SIGTERM', () => {
  subscriber.disconnect()
  process.exit(0)
})
