import type { FastifyReply, FastifyRequest } from 'fastify'
import type { KeygateServer } from '../shared/http/build-server.js'
import { readGatewayRequest, type GatewayPolicy } from './gateway-request.js'
import type { KeyVerifier } from './key-verifier.js'
import { gatewayAnswer } from './verdict-status.js'

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

/**
 * /v1/authorize, any method, any body: forward-auth for nginx auth_request, Envoy ext_authz (HTTP service)
 * and Traefik forwardAuth. Answers with a status and X-Keygate-* headers only; the body is never read.
 * When the verifier fails closed (store unreachable beyond the staleness bound) the answer is a 503 in the
 * contract's error shape, which every gateway turns into a refusal.
 */
export function registerAuthorize(app: KeygateServer, verifier: KeyVerifier, policy: GatewayPolicy): void {
  app.register(async (scope: KeygateServer) => {
    // Whatever the gateway sends as a body is drained unread.
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', (_request, payload, done) => {
      payload.resume()
      payload.on('end', () => done(null))
      payload.on('error', done)
    })
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const check = readGatewayRequest(request.headers, policy)
      const verdict = check.key === undefined ? undefined : await verifier.verify(check.key, check.request)
      const answer = gatewayAnswer(verdict)
      return reply.code(answer.status).headers(answer.headers).send()
    }
    // Envoy's ext_authz appends the original path to its path_prefix: /v1/authorize/<anything> is the same check.
    for (const url of ['/v1/authorize', '/v1/authorize/*']) {
      scope.route({ method: METHODS, url, config: { anyBody: true }, handler })
    }
  })
}
