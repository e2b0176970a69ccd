import { createServer, connect } from 'node:net'

/**
 * A TCP relay to TARGET_PORT that holds every chunk DELAY_MS (default 0.5) in each direction before passing it
 * on, in order: Redis "on the network" for the latency comparison (this kernel has no netem). A chunk is
 * forwarded when its own delay has passed, so back-to-back chunks keep their spacing rather than queueing.
 */
const delayMs = Number(process.env.DELAY_MS ?? 0.5)
const target = Number(process.env.TARGET_PORT)

/** Pipes `from` into `to`, each chunk delayed by delayMs from its arrival; the queue keeps their order. */
function delayed(from: NodeJS.ReadableStream, to: NodeJS.WritableStream & { destroy(): void }) {
  const queue: { due: number; chunk: Buffer }[] = []
  let timer: NodeJS.Timeout | NodeJS.Immediate | undefined
  const flush = () => {
    timer = undefined
    const now = performance.now()
    while (queue.length > 0 && queue[0]!.due <= now) to.write(queue.shift()!.chunk)
    if (queue.length > 0) schedule(queue[0]!.due - now)
  }
  // setTimeout rounds below a millisecond up to one: the last stretch is waited out on setImmediate turns, which
  // yield to I/O (the relay runs on the load generator's core, at a low request rate, so this costs little).
  const schedule = (waitMs: number) => {
    timer = waitMs > 1.5 ? setTimeout(flush, Math.floor(waitMs - 1)) : setImmediate(flush)
  }
  from.on('data', (chunk: Buffer) => {
    queue.push({ due: performance.now() + delayMs, chunk })
    if (timer === undefined) schedule(delayMs)
  })
  from.on('end', () => to.end())
}

createServer((client) => {
  const server = connect(target, '127.0.0.1')
  client.setNoDelay(true)
  server.setNoDelay(true)
  delayed(client, server)
  delayed(server, client)
  client.on('error', () => server.destroy())
  server.on('error', () => client.destroy())
  client.on('close', () => server.destroy())
  server.on('close', () => client.destroy())
}).listen(Number(process.env.PORT), '127.0.0.1')
process.on('SIGTERM', () => process.exit(0))
