import { Readable } from 'node:stream'
import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateKey } from '../../shared/keys/key-material.js'
import { openBackend, startTestVerifier } from '../support/apps.js'
import { waitFor } from '../support/wait-for.js'
import { overriding } from '../support/store-overrides.js'

describe('graceful shutdown', () => {
  it('turns readiness false and answers new requests with a contract-shaped 503 while in-flight requests finish', async () => {
    const backend = await openBackend()
    // Keys that exist: an unknown one is answered without a read (the filter of known hashes); the read is the hold.
    const api = { id: newId('api'), name: 'shutdown', createdAt: Date.now() }
    await backend.store.keys.createApi(api)
    const [first, second] = [generateKey('sk'), generateKey('sk')]
    for (const { hash, start } of [first, second])
      await backend.store.keys.createKey({
        id: newId('key'),
        hash,
        start,
        apiId: api.id,
        enabled: true,
        createdAt: Date.now(),
      })
    // A store read held back until released: the request waiting on it is "in flight".
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let reads = 0
    const heldStore = overriding(backend.store, {
      keys: {
        getKeyByHash: async (hash: string) => {
          reads++
          await gate
          return backend.store.keys.getKeyByHash(hash)
        },
      },
    })
    const server = await startTestVerifier({ backend: { ...backend, store: heldStore } })
    await server.app.listen({ port: 0, host: '127.0.0.1' })
    const address = server.app.server.address()
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`

    const inFlight = fetch(`${base}/v1/keys.verifyKey`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: first.key }),
    })
    // The same through Fastify's route: a chunked body (no Content-Length) is not the fast path's.
    const inFlightThroughFastify = request(`${base}/v1/keys.verifyKey`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Readable.from([JSON.stringify({ key: second.key })]),
    })
    await waitFor(() => reads === 2, 'both in-flight requests to reach the store')
    server.app.stopAccepting()

    const ready = await server.app.inject({ method: 'GET', url: '/readyz' })
    expect(ready.statusCode).toBe(503)
    expect((await server.app.inject({ method: 'GET', url: '/livez' })).statusCode).toBe(200)
    expect(ready.json().error).toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining('shutting down') })
    const refused = await server.app.inject({
      method: 'POST',
      url: '/v1/keys.verifyKey',
      headers: { 'content-type': 'application/json' },
      payload: { key: 'k' },
    })
    expect(refused.statusCode).toBe(503)
    expect(refused.headers.connection).toBe('close')
    expect(refused.json()).toEqual({
      error: {
        code: 'UNAVAILABLE',
        message: expect.any(String),
        docs: expect.any(String),
        requestId: refused.headers['x-request-id'],
      },
    })

    release()
    const finished = await inFlight
    expect(finished.status).toBe(200)
    expect(await finished.json()).toMatchObject({ valid: true, code: 'VALID' })
    // Answered, and told not to keep the connection: it must not linger past the shutdown.
    expect(finished.headers.get('connection')).toBe('close')
    const finishedThroughFastify = await inFlightThroughFastify
    expect(finishedThroughFastify.statusCode).toBe(200)
    expect(await finishedThroughFastify.body.json()).toMatchObject({ valid: true, code: 'VALID' })
    expect(finishedThroughFastify.headers.connection).toBe('close')
    await server.close()
  })
})
