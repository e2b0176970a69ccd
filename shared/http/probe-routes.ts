import type { Registry } from 'prom-client'
import { Type } from 'typebox'
import { ApiError } from '../errors/errors.js'
import type { KeygateServer } from './keygate-server.js'
import { renderError } from './error-handler.js'

interface Probes {
  /** Why the server cannot serve correctly now, or [] when it can (shutting down included). */
  notReadyReasons(): Promise<string[]>
  registry: Registry
  docsBaseUrl: string
}

/** GET /livez, /readyz and /metrics: what orchestrators and Prometheus ask every Keygate server. */
export function registerProbes(app: KeygateServer, probes: Probes): void {
  app.get(
    '/livez',
    {
      schema: {
        response: {
          200: Type.Object({ status: Type.Literal('ok', { description: 'Always `ok`: the process answers' }) }),
        },
      },
    },
    async () => ({ status: 'ok' as const }),
  )
  app.get(
    '/readyz',
    {
      schema: {
        response: {
          200: Type.Object({ status: Type.Literal('ready', { description: 'Always `ready` (503 otherwise)' }) }),
        },
      },
    },
    async (request, reply) => {
      const reasons = await probes.notReadyReasons()
      if (reasons.length === 0) return { status: 'ready' as const }
      return renderError(
        new ApiError('UNAVAILABLE', `not ready: ${reasons.join('; ')}`),
        request,
        reply,
        probes.docsBaseUrl,
      )
    },
  )
  app.get('/metrics', async (_request, reply) => {
    reply.type(probes.registry.contentType)
    return probes.registry.metrics()
  })
}
