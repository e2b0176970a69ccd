import Fastify from 'fastify'

/**
 * The ceiling for verifyKey: the same framework parsing the same JSON body and answering a constant verdict
 * of the same shape. Nothing can be faster on this stack; keygate's hot path is measured against it.
 */
const VERDICT = { keyId: 'key_3ZtWQ4dJ8Fq1', valid: true, code: 'VALID', enabled: true, requestId: 'req_3ZtWQ4dJ8Fq1' }

const app = Fastify({ logger: false })
app.post('/v1/keys.verifyKey', async (request) => {
  if (typeof (request.body as { key?: unknown }).key !== 'string') throw new Error('no key')
  return VERDICT
})
app.get('/readyz', async () => ({ status: 'ready' }))
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
// SIGTERM (the bench's stop) exits normally, so a --cpu-prof profile gets written.
process.on('SIGTERM', () => process.exit(0))
