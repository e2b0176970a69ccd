import type { Server } from 'node:net'
import type { KeygateServer } from '../shared/http/keygate-server.js'

/** A port a server could not listen on, named by the option that sets it. */
export class ListenError extends Error {
  constructor(port: number, host: string, option: string, cause: NodeJS.ErrnoException) {
    const why =
      cause.code === 'EADDRINUSE'
        ? 'is already in use (another process listens there)'
        : cause.code === 'EACCES'
          ? 'needs privileges this process lacks'
          : `cannot be listened on (${cause.code ?? cause.message})`
    super(`port ${port} on ${host} ${why}: set ${option} to another port`, { cause })
    this.name = 'ListenError'
  }
}

/** Listens with a plain node:net/http server; a failure names the option. */
export function listenServer(server: Server, port: number, host: string, option: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => reject(new ListenError(port, host, option, err))
    server.once('error', failed)
    server.listen(port, host, () => {
      server.off('error', failed)
      resolve()
    })
  })
}

/** Listens with a Keygate (Fastify) server; a failure names the option. */
export async function listenApp(app: KeygateServer, port: number, host: string, option: string): Promise<void> {
  try {
    await app.listen({ port, host })
  } catch (err) {
    throw new ListenError(port, host, option, err as NodeJS.ErrnoException)
  }
}
