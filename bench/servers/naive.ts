import Fastify from 'fastify'
import { hashKey } from '../../shared/key-material.js'
import { openRedisBackend } from '../../shared/store/redis-backend.js'
import { verify } from '../../shared/verification.js'

/**
 * The naive design keygate is compared with: no cache, every verification reads the key's record from
 * Redis (one HMGET, the same read keygate does on a miss) and applies the same rules.
 */
const { store } = openRedisBackend(process.env.REDIS_URL!, 'bench-naive')
const app = Fastify({ logger: false })
app.post('/v1/keys.verifyKey', async (request) => {
  const { key } = request.body as { key: string }
  const verdict = verify(await store.getKeyByHash(hashKey(key)), {}, Date.now())
  return { ...verdict, requestId: request.id }
})
app.get('/readyz', async () => ({ status: 'ready' }))
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
// SIGTERM (the bench's stop) exits normally, so a --cpu-prof profile gets written.
process.on('SIGTERM', () => process.exit(0))
