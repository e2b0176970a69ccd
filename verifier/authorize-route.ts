import { METHODS } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { KeygateServer } from '../shared/http/build-server.js'
import type { GatewayPolicy } from '../shared/config/settings.js'
import { readGatewayRequest } from './gateway-request.js'
import type { KeyVerifier } from './key-verifier.js'
import { gatewayAnswer } from './verdict-status.js'

/**
 * /v1/authorize, any method, any body: forward-auth for nginx auth_request, Envoy ext_authz (HTTP service)
 * and Traefik forwardAuth. Answers with a status and X-Keygate-* headers only; the body is never read.
 * When the verifier fails closed (store unreachable beyond the staleness bound) the answer is a 503 in the
 * contract's error shape, which every gateway turns into a refusal.
 */
export function registerAuthorize(app: KeygateServer, verifier: KeyVerifier, policy: GatewayPolicy): void {
  // Envoy forwards the original method, whatever it is: let the router know every method Node parses.
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true })
  }
  app.register(async (scope: KeygateServer) => {
    scope.removeAllContentTypeParsers()
    // Whatever the gateway sends as a body is drained unread; the answer does not wait for it.
    scope.addContentTypeParser('*', (_request, payload, done) => {
      payload.on('error', () => {})
      payload.resume()
      done(null)
    })
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const check = readGatewayRequest(request.headers, policy, true)
      const verdict = check.key === undefined ? undefined : await verifier.verify(check.key, check.request)
      const answer = gatewayAnswer(verdict, verifier.now())
      return reply.code(answer.status).headers(answer.headers).send()
    }
    // Envoy's ext_authz appends the original path to its path_prefix: /v1/authorize/<anything> is the same check.
    // Envoy forwards the original method, whatever it is.
    for (const url of ['/v1/authorize', '/v1/authorize/*']) scope.all(url, { config: { anyBody: true } }, handler)
  })
}
