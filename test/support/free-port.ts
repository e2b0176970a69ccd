import { createServer } from 'node:net'

// Ports handed out lie below Linux's ephemeral range (32768 and up by default), where the kernel picks the local
// port of every outgoing connection: a port found free there can be taken by a client socket before the server
// that was meant to have it binds. Each vitest worker takes its own slice, so two files running at once never
// pick the same port; a start at a random place in the slice keeps files run one after another in the same worker
// off the ports a previous file's lingering processes may still hold.
const FIRST = 10_000
const LAST = 32_000
const WORKERS = 8
const worker = (Number(process.env.VITEST_POOL_ID ?? '1') - 1 + WORKERS) % WORKERS
const sliceSize = Math.floor((LAST - FIRST) / WORKERS)
const sliceStart = FIRST + worker * sliceSize
let next = Math.floor(Math.random() * sliceSize)
/** Ports in that range fetch() refuses to connect to (the Fetch standard's "bad ports"): never handed out. */
const FETCH_BAD_PORTS = new Set([10_080])

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.unref()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/** A TCP port on 127.0.0.1 that was free a moment ago and that no other test worker will be handed. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < sliceSize; tries++) {
    const port = sliceStart + (next++ % sliceSize)
    if (!FETCH_BAD_PORTS.has(port) && (await bindable(port))) return port
  }
  throw new Error(`no free port in ${sliceStart}–${sliceStart + sliceSize - 1}`)
}
