import { createConnection, createServer, type Server, type Socket } from 'node:net'

/** A TCP proxy in front of Redis whose existing connections can be stranded. */
export interface StrandingProxy {
  /** `redis://127.0.0.1:<port>`: where the processes under test connect. */
  url: string
  /** Connections made so far (each client connection, whatever became of it). */
  connections(): number
  /**
   * Strands every connection open now: from here on nothing passes either way on them, and nothing tells either end
   * (no FIN, no RST), as when a firewall or NAT forgets a connection or a server's address vanishes. Connections made
   * afterwards pass as before. With `only`, just the connections whose client's first bytes (its handshake: `CLIENT
   * SETNAME` and the like) contain it.
   */
  strand(only?: string): void
  /**
   * A black hole: nothing passes on any connection, open or new, until `resume`, which then delivers what was held (as
   * TCP does once a path comes back). Neither end is told.
   */
  blackhole(): void
  resume(): void
  stop(): Promise<void>
}

/** How much of what a client sends first is kept to tell its connections apart. */
const OPENING_BYTES = 512

/** Starts the proxy on a free port of 127.0.0.1, forwarding to `target` (a redis:// URL). */
export async function startStrandingProxy(target: string): Promise<StrandingProxy> {
  const { hostname, port } = new URL(target)
  const open = new Set<{ client: Socket; upstream: Socket; stranded: boolean; opening: string }>()
  let made = 0
  /** While a black hole lasts: what each way held back, in order, to deliver when it ends. */
  let held: (() => void)[] | undefined
  // A client's FIN is passed on like its bytes, never answered by the proxy itself: on a stranded connection it goes
  // nowhere, as on a dead path, and the client's socket stays half-closed, waiting.
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    made++
    const upstream = createConnection({ host: hostname, port: Number(port) })
    const pair = { client, upstream, stranded: false, opening: '' }
    open.add(pair)
    client.on('data', (chunk: Buffer) => {
      if (pair.opening.length < OPENING_BYTES) pair.opening += chunk.toString('latin1', 0, OPENING_BYTES)
    })
    const pass = (to: Socket) => (chunk: Buffer) => {
      if (pair.stranded) return
      if (held) held.push(() => to.write(chunk))
      else to.write(chunk)
    }
    client.on('data', pass(upstream))
    upstream.on('data', pass(client))
    const end = () => {
      open.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    // A stranded connection's ends learn nothing: only the other side of the proxy would have told them.
    client.on('end', () => pair.stranded || end())
    client.on('close', () => pair.stranded || end())
    upstream.on('close', () => pair.stranded || end())
    client.on('error', () => {})
    upstream.on('error', () => {})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port')
  return {
    url: `redis://127.0.0.1:${address.port}`,
    connections: () => made,
    strand: (only) => {
      for (const pair of open) if (only === undefined || pair.opening.includes(only)) pair.stranded = true
    },
    blackhole: () => {
      held ??= []
    },
    resume: () => {
      const release = held ?? []
      held = undefined
      for (const deliver of release) deliver()
    },
    stop: async () => {
      for (const { client, upstream } of open) {
        client.destroy()
        upstream.destroy()
      }
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
