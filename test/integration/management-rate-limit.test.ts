import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { startTestControlPlane, TEST_ROOT_KEY, type TestServer } from '../support/apps.js'

describe('management rate limit per root key', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestControlPlane({ managementRateLimit: 5 })
  })
  afterAll(async () => {
    await server.close()
  })

  const call = (rootKey: string) =>
    server.app.inject({
      method: 'POST',
      url: '/v1/apis.createApi',
      headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
      payload: { name: 'rate-limited' },
    })

  it('answers 429 RATE_LIMITED in the contract shape past the budget, per root key, and leaves verifyKey alone', async () => {
    for (let i = 0; i < 5; i++) expect((await call(TEST_ROOT_KEY)).statusCode).toBe(200)
    const limited = await call(TEST_ROOT_KEY)
    expect(limited.statusCode).toBe(429)
    expect(limited.json()).toEqual({
      error: {
        code: 'RATE_LIMITED',
        message: expect.stringContaining('management calls'),
        docs: expect.stringContaining('/errors/RATE_LIMITED'),
        requestId: limited.headers['x-request-id'],
      },
    })
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)

    const { key: other, hash } = generateRootKey()
    const rootKeyRecord = { id: newId('root'), hash, permissions: ['*'], createdAt: Date.now() }
    await server.backend.store.rootKeys.createRootKey(rootKeyRecord)
    expect((await call(other)).statusCode).toBe(200)

    for (let i = 0; i < 10; i++) {
      const verify = await server.app.inject({
        method: 'POST',
        url: '/v1/keys.verifyKey',
        headers: { 'content-type': 'application/json' },
        payload: { key: 'sk_x' },
      })
      expect(verify.statusCode).toBe(200)
    }
    // Strangers are refused by authentication, and do not spend anyone's budget.
    expect((await call('not-a-root-key-000000')).json().error.code).toBe('UNAUTHORIZED')
  })
})
