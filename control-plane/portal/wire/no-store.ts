import type { KeygateServer } from '../../../shared/http/keygate-server.js'

/** Portal answers carry secrets (codes, tokens, keys) or a customer's data: no cache keeps them. */
export function noStore(app: KeygateServer): void {
  app.addHook('onSend', async (request, reply) => {
    if (request.url.startsWith('/v2/portal.'))
      void reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
  })
}
