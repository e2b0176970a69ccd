import type { Principal } from '../root-key-principal.js'
import type { KeygateServer } from './build-server.js'

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The root key's caller, on routes that take one: set by an onRequest hook, before the body is read (the control
     * plane's management hook, or the route's own: json-endpoint.ts, v2-ratelimit-limit.ts); null elsewhere.
     */
    principal: Principal | null
  }
}

/** Declares `request.principal` on `app` (Fastify wants request properties declared), unless a parent has. */
export function decoratePrincipal(app: KeygateServer): void {
  if (!app.hasRequestDecorator('principal')) app.decorateRequest('principal', null)
}

/** The root key's check, from the `Authorization` header: a principal, or the contract's UNAUTHORIZED. */
export type Authenticate = (authorization: string | string[] | undefined) => Principal | Promise<Principal>

/**
 * Sets `request.principal` on every request to `scope`'s routes before the body is read, so that a missing or refused
 * root key is answered whatever the body holds.
 */
export function authenticateBeforeBody(scope: KeygateServer, authenticate: Authenticate): void {
  decoratePrincipal(scope)
  scope.addHook('onRequest', async (request) => {
    request.principal = await authenticate(request.headers.authorization)
  })
}
