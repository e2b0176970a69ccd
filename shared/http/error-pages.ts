import type { FastifyReply } from 'fastify'
import { DOCUMENTED_CODES } from '../errors/documented-codes.js'
import { ApiError } from '../errors/errors.js'
import { closestName } from '../closest-name.js'
import { clipInput } from '../clip-input.js'
import type { KeygateServer } from './keygate-server.js'
import { buildErrorPages, ERROR_PAGE_HEADERS } from './error-page-html.js'

/**
 * The pages error bodies link to: /docs/errors (every code) and /docs/errors/<CODE> (what it means, how to fix
 * it). Served by every Keygate server, so that the default link (the path `/docs/errors/<CODE>`, relative to the
 * server that answered) resolves wherever the answer came from; the reverse proxy serves them too
 * (verifier/proxy-error-pages.ts).
 */
export function registerErrorPages(app: KeygateServer, docsBaseUrl: string): void {
  const pages = buildErrorPages(docsBaseUrl)
  app.get('/docs/errors', { schema: { hide: true } }, async (_request, reply) => sendPage(reply, pages.index))
  app.get<{ Params: { code: string } }>('/docs/errors/:code', { schema: { hide: true } }, async (request, reply) => {
    const { code } = request.params
    const page = pages.page(code)
    if (page === undefined) {
      const nearest = closestName(code, DOCUMENTED_CODES)
      throw new ApiError(
        'NOT_FOUND',
        `no error code ${clipInput(code)}${nearest ? `; did you mean ${nearest}?` : ''} (every code: /docs/errors)`,
      )
    }
    return sendPage(reply, page)
  })
}

const sendPage = (reply: FastifyReply, html: string) => reply.headers(ERROR_PAGE_HEADERS).send(html)
