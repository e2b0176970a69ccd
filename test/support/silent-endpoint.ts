import { createServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'

/**
 * An endpoint that never answers, as a slowloris or a firewall that drops packets looks to a sender: a TCP server that
 * accepts each connection and then neither reads nor writes. `connections` counts what it accepted.
 */
export async function startSilentEndpoint() {
  const sockets = new Set<Socket>()
  let connections = 0
  const server: Server = createServer((socket) => {
    connections++
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    // Never read: the request stays in the socket's buffers, unanswered.
    socket.pause()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    get connections() {
      return connections
    },
    /** Resets every connection it holds (the sender sees the request fail at once) and stops listening. */
    async stop() {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
