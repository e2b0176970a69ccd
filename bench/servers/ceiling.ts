import Fastify from 'fastify'
import { BENCH_KEY_FIELDS, CEILING_KEY_ID } from '../lib/bench-key.js'

/**
 * The ceiling for verifyKey: the same framework parsing the same JSON body, validating it by a schema and
 * serialising a constant verdict of the same shape and size as keygate's for the bench keys (name, ownerId,
 * meta) by a response schema. Nothing can be faster on this stack; keygate's hot path is measured against it.
 */
const VERDICT = {
  keyId: CEILING_KEY_ID,
  valid: true,
  code: 'VALID',
  ...BENCH_KEY_FIELDS,
  enabled: true,
  // A key with an owner answers with the owner's identity (Unkey's v1 shape): so does the ceiling.
  identity: { id: 'id_1ChKsaYW9TjWvKccaH9dgA', externalId: BENCH_KEY_FIELDS.ownerId, meta: {} },
  requestId: 'req_3ZtWQ4dJ8Fq1Xy9aBcDeFg',
}

const app = Fastify({ logger: false })
app.post(
  '/v1/keys.verifyKey',
  {
    schema: {
      body: {
        type: 'object',
        properties: { key: { type: 'string', minLength: 1, maxLength: 1024 } },
        required: ['key'],
        additionalProperties: false,
      },
      response: {
        200: {
          type: 'object',
          properties: {
            keyId: { type: 'string' },
            valid: { type: 'boolean' },
            code: { type: 'string' },
            name: { type: 'string' },
            ownerId: { type: 'string' },
            meta: { type: 'object', additionalProperties: true },
            enabled: { type: 'boolean' },
            identity: {
              type: 'object',
              properties: {
                id: { type: 'string' },
                externalId: { type: 'string' },
                meta: { type: 'object', additionalProperties: true },
              },
            },
            requestId: { type: 'string' },
          },
          required: ['valid', 'code', 'requestId'],
        },
      },
    },
  },
  async () => VERDICT,
)
app.get('/readyz', async () => ({ status: 'ready' }))
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
// SIGTERM (the bench's stop) exits normally, so a --cpu-prof profile gets written.
process.on('SIGTERM', () => process.exit(0))
