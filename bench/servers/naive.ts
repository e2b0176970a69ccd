import Fastify from 'fastify'
import { pino } from 'pino'
import { Type } from 'typebox'
import { fastJsonPath, fastRouteServerFactory } from '../../shared/http/fast-route.js'
import { hashKey } from '../../shared/keys/key-material.js'
import { openBackend, redisConnections } from '../../shared/store/backend.js'
import { verify } from '../../shared/verification/verification.js'
import { EMPTY_CONTEXT } from '../../shared/keys/key-context.js'
import { Registry } from 'prom-client'
import { RouteMetrics } from '../../shared/http/route-metrics.js'
import { LATENCY_BUCKETS } from '../../shared/http/metrics-registry.js'

/**
 * The naive design keygate is compared with: no cache, every verification reads the key's record from
 * Redis (one HMGET, the same read keygate does on a miss) and applies the same rules — served on the same
 * stack as keygate's verifyKey (the fast route ahead of Fastify), so the comparison is the cache, not the framework.
 */
const { store } = openBackend({ kind: 'redis', connections: redisConnections(process.env.REDIS_URL!, 'bench-naive') })
const Body = Type.Object({ key: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false })
const Response = Type.Object({
  keyId: Type.Optional(Type.String()),
  valid: Type.Boolean(),
  code: Type.String(),
  enabled: Type.Optional(Type.Boolean()),
  requestId: Type.String(),
})
const app = Fastify({
  logger: false,
  serverFactory: fastRouteServerFactory([
    fastJsonPath(
      {
        id: 'answer',
        method: 'POST',
        doc: { summary: 'a test route', rootKey: false, tag: 'health' },
        url: '/v1/keys.verifyKey',
        input: Body,
        response: Response,
        handle: async (body) =>
          verify(await store.keys.getKeyByHash(hashKey((body as { key: string }).key)), EMPTY_CONTEXT, {}, Date.now()),
      },
      {
        bodyLimitBytes: 1_048_576,
        docsBaseUrl: 'https://keygate.dev/docs',
        log: pino({ level: 'silent' }),
        closing: () => false,
        routes: new RouteMetrics(new Registry(), LATENCY_BUCKETS),
      },
    ),
  ]),
})
app.get('/readyz', async () => ({ status: 'ready' }))
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
// SIGTERM (the bench's stop) exits normally, so a --cpu-prof profile gets written.
process.on('SIGTERM', () => process.exit(0))
