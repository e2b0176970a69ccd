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
   * afterwards pass as before.
   */
  strand(): void
  stop(): Promise<void>
}

/** Starts the proxy on a free port of 127.0.0.1, forwarding to `target` (a redis:// URL). */
export async function startStrandingProxy(target: string): Promise<StrandingProxy> {
  const { hostname, port } = new URL(target)
  const open = new Set<{ client: Socket; upstream: Socket; stranded: boolean }>()
  let made = 0
  const server: Server = createServer((client) => {
    made++
    const upstream = createConnection({ host: hostname, port: Number(port) })
    const pair = { client, upstream, stranded: false }
    open.add(pair)
    client.on('data', (chunk) => pair.stranded || upstream.write(chunk))
    upstream.on('data', (chunk) => pair.stranded || client.write(chunk))
    const end = () => {
      open.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    // A stranded connection's ends learn nothing: only the other side of the proxy would have told them.
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
    strand: () => {
      for (const pair of open) pair.stranded = true
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
