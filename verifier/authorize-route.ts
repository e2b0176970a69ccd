import type { FastifyReply, FastifyRequest } from 'fastify'
import type { KeygateServer } from '../shared/http/keygate-server.js'
import { memoOf } from '../shared/frozen-memo.js'
import { docsBaseFor } from '../shared/http/docs-base.js'
import { errorBody } from '../shared/http/error-body.js'
import { nodeHttp } from '../shared/http/node-http.js'
import { StoreUnavailableError } from '../shared/errors/errors.js'
import type { GatewayPolicy } from '../shared/config/settings.js'
import { readGatewayRequest, type GatewayCheck } from './gateway-request.js'
import type { FastHeaderRoute } from '../shared/http/fast-header-route.js'
import type { KeyVerifier } from './key-verifier.js'
import type { AddressedRequest } from '../shared/addresses/client-address.js'
import { gatewayAnswer, refusalMessage, unavailable, type GatewayAnswer } from './verdict-status.js'

/**
 * /v1/authorize, any method, any body: forward-auth for nginx auth_request, Envoy ext_authz (HTTP service),
 * Traefik forwardAuth and Caddy forward_auth. Answers with a status and X-Keygate-* headers only; the body is
 * never read. When the verifier fails closed (store unreachable beyond the staleness bound) the answer is a 503
 * in the contract's error shape, which every gateway turns into a refusal. A request that names no api, to a
 * verifier bound to none, is refused (403 API_ID_REQUIRED, with a body saying what to set): it is never checked
 * against every api unless the operator said so (`--any-api`).
 */
export function registerAuthorize(
  app: KeygateServer,
  verifier: KeyVerifier,
  policy: GatewayPolicy,
  docsBaseUrl: string,
): void {
  if (policy.anyApi && policy.apiId === undefined) {
    app.log.warn('AUTHORIZE_ANY_API: /v1/authorize accepts a key of any api when the gateway names none')
  } else if (policy.apiId === undefined) {
    app.log.info(
      '/v1/authorize takes the api from X-Keygate-Api-Id (set by the gateway) and refuses requests without it: no AUTHORIZE_API_ID',
    )
  }
  let refusedUnbound = false
  // Envoy forwards the original method, whatever it is: let the router know every method Node parses.
  for (const method of nodeHttp.METHODS) {
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
      if (check.noApi) {
        // A deployment mistake, not the client's: said once in the log, and to every caller in the body.
        if (!refusedUnbound) {
          refusedUnbound = true
          request.log.warn(
            { requestId: request.id },
            '/v1/authorize refused a request: no X-Keygate-Api-Id from the gateway, and the verifier runs without --api-id (or --any-api)',
          )
        }
        const answer = gatewayAnswer({ code: 'API_ID_REQUIRED' }, verifier.now())
        const message = refusalMessage('API_ID_REQUIRED', policy.keyHeader, check.keyFrom)
        return reply
          .code(answer.status)
          .headers(answer.headers)
          .send(errorBody({ code: 'API_ID_REQUIRED', message }, request.id, docsBaseFor(docsBaseUrl, request.raw)))
      }
      const answer = await answerOf(verifier, check, request.raw)
      return reply.code(answer.status).headers(answer.headers).send()
    }
    // Envoy's ext_authz appends the original path to its path_prefix: /v1/authorize/<anything> is the same check.
    // Envoy forwards the original method, whatever it is.
    for (const url of ['/v1/authorize', '/v1/authorize/*']) scope.all(url, { config: { anyBody: true } }, handler)
  })
}

/**
 * /v1/authorize served ahead of Fastify (shared/http/fast-header-route.ts) for what gateways send: the path
 * itself, no body. A request naming no api while the verifier is bound to none is left to the Fastify route,
 * which logs it once and explains in a body.
 */
export function authorizeFastRoute(verifier: KeyVerifier, policy: GatewayPolicy): FastHeaderRoute {
  return {
    url: '/v1/authorize',
    answer(request) {
      const check = readGatewayRequest(request.headers, policy, true)
      return check.noApi ? undefined : answerOf(verifier, check, request)
    },
  }
}

// A memoised verdict is the same every time it is answered (key-verifier.ts): so is its gateway answer, kept in the
// verdict's memo under this symbol, unless it depends on the clock (Retry-After), which only limits and credits do.
const GATEWAY_ANSWER = Symbol('gateway answer')

/**
 * A gateway's answer for a request that names its api (or may use any): status and X-Keygate-* headers. The client's
 * address is the request's: the gateway's own, or (CLIENT_ADDRESS=forwarded, the gateway trusted) the client its
 * X-Forwarded-For names.
 */
function answerOf(
  verifier: KeyVerifier,
  check: GatewayCheck,
  request: AddressedRequest,
): GatewayAnswer | Promise<GatewayAnswer> {
  if (check.key === undefined) return gatewayAnswer({ code: 'MISSING_KEY' }, verifier.now())
  const verdict = verifier.verify(check.key, check.request, request)
  if (verdict instanceof Promise) {
    return verdict.then(
      (value) => gatewayAnswer(value, verifier.now()),
      (err: unknown) => {
        throw err instanceof StoreUnavailableError ? unavailable(err) : err
      },
    )
  }
  const memo = memoOf(verdict)
  if (memo === undefined || verdict.code === 'RATE_LIMITED' || verdict.code === 'USAGE_EXCEEDED')
    return gatewayAnswer(verdict, verifier.now())
  let answer = memo[GATEWAY_ANSWER] as GatewayAnswer | undefined
  if (answer === undefined) memo[GATEWAY_ANSWER] = answer = Object.freeze(gatewayAnswer(verdict, verifier.now()))
  return answer
}
