import { describe, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import { openBackend, startTestVerifier } from '../support/apps.js'
import { overriding } from '../support/store-overrides.js'

describe('verifier start-up', () => {
  it('keeps retrying the first sync when the store is not reachable yet although the feed is subscribed', async () => {
    const backend = await openBackend()
    // The subscriber connection is up but the store's is not yet, as happens at boot on Redis.
    let failures = 0
    const slowToConnect = overriding(backend.store, {
      changes: {
        readRevisions: async () => {
          if (failures < 2) {
            failures++
            throw new StoreUnavailableError('not connected yet')
          }
          return backend.store.changes.readRevisions()
        },
      },
    })
    const server = await startTestVerifier({ backend: { ...backend, store: slowToConnect } })
    expect(failures).toBe(2)
    expect(server.verifier.ready).toBe(true)
    expect((await server.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200)
    await server.close()
  })
})
