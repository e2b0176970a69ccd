import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { startTestControlPlane, TEST_ROOT_KEY, type TestServer } from '../support/apps.js'

/**
 * A 403 says which right is missing without naming what the caller may not read: the api of a key it named by id,
 * the id of an identity it named by externalId. (A key or identity that does not exist is a 404, or the same 403.)
 */
describe('refusals name the right, not the record the caller may not read', () => {
  let server: TestServer
  let apiId: string
  let key: { keyId: string; key: string }
  let identity: { id: string; externalId: string }
  /** A root key with no right on the api or the identity: it holds rights elsewhere only. */
  let outsider: string

  const call = async (method: 'GET' | 'POST', url: string, rootKey: string, payload?: object) => {
    const answer = await server.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
      ...(payload ? { payload } : {}),
    })
    return { status: answer.statusCode, body: answer.body }
  }

  beforeAll(async () => {
    server = await startTestControlPlane()
    apiId = JSON.parse((await call('POST', '/v1/apis.createApi', TEST_ROOT_KEY, { name: 'theirs' })).body).apiId
    key = JSON.parse((await call('POST', '/v1/keys.createKey', TEST_ROOT_KEY, { apiId })).body)
    const externalId = `team-${randomUUID()}`
    const made = JSON.parse((await call('POST', '/v1/identities.createIdentity', TEST_ROOT_KEY, { externalId })).body)
    identity = { id: made.identityId, externalId }
    const { key: rootKey, hash } = generateRootKey()
    const permissions = [`api.${newId('api')}.*`, `identity.${newId('id')}.read_identity`, 'rbac.*.*']
    await server.backend.store.rootKeys.createRootKey({ id: newId('root'), hash, permissions, createdAt: Date.now() })
    outsider = rootKey
  })
  afterAll(async () => {
    await server?.close()
  })

  it("of a key named by id: the key's api, as <the key's api>", async () => {
    const refusals = [
      await call('GET', `/v1/keys.getKey?keyId=${key.keyId}`, outsider),
      await call('POST', '/v1/keys.updateKey', outsider, { keyId: key.keyId, name: 'mine' }),
      await call('POST', '/v1/keys.deleteKey', outsider, { keyId: key.keyId }),
      await call('POST', '/v1/keys.whoami', outsider, { key: key.key }),
      await call('POST', '/v1/keys.updateRemaining', outsider, { keyId: key.keyId, op: 'set', value: 1 }),
      await call('GET', `/v1/keys.getVerifications?keyId=${key.keyId}`, outsider),
      await call('POST', '/v1/keys.addPermissions', outsider, { keyId: key.keyId, permissions: [{ name: 'x' }] }),
      await call('POST', '/v2/keys.getKey', outsider, { keyId: key.keyId }),
      await call('POST', '/v2/keys.addRoles', outsider, { keyId: key.keyId, roles: ['x'] }),
      await call('POST', '/v2/keys.updateKey', outsider, { keyId: key.keyId, name: 'mine' }),
      await call('POST', '/v1/keys.rerollKey', outsider, { keyId: key.keyId }),
      await call('POST', '/v2/keys.rerollKey', outsider, { keyId: key.keyId, expiration: 0 }),
    ]
    for (const refused of refusals) {
      expect(refused.status, refused.body).toBe(403)
      expect(refused.body).toContain("api.<the key's api>.")
      expect(refused.body).not.toContain(apiId)
    }
  })

  it('of an identity named by externalId: as <the identity>', async () => {
    const refusals = [
      await call('GET', `/v1/identities.getIdentity?externalId=${identity.externalId}`, outsider),
      await call('POST', '/v1/identities.updateIdentity', outsider, { externalId: identity.externalId, meta: {} }),
      await call('POST', '/v2/identities.getIdentity', outsider, { identity: identity.externalId }),
    ]
    for (const refused of refusals) {
      expect(refused.status, refused.body).toBe(403)
      expect(refused.body).toContain('identity.<the identity>.')
      expect(refused.body).not.toContain(identity.id)
    }
    // Named by its id on v1, the refusal names that id: the caller gave it, and v1 refuses before looking it up.
    const byId = await call('GET', `/v1/identities.getIdentity?identityId=${identity.id}`, outsider)
    expect(byId.status).toBe(403)
    expect(byId.body).toContain(`identity.${identity.id}.read_identity`)
  })

  /** The error of a refusal, without its request id: what must not differ between what exists and what does not. */
  const refusalOf = (answer: { status: number; body: string }) => {
    const body = JSON.parse(answer.body)
    return { status: answer.status, error: { ...body.error, requestId: undefined }, meta: undefined }
  }

  it('the same refusal whether the identity or namespace asked about exists or not', async () => {
    const nobody = `nobody-${randomUUID()}`
    const namespace = `ns-${randomUUID()}`
    await call('POST', '/v1/ratelimits.limit', TEST_ROOT_KEY, {
      namespace,
      identifier: 'x',
      limit: 1,
      duration: 60_000,
    })
    const pairs: [string, (name: string) => Promise<{ status: number; body: string }>, string, string][] = [
      [
        'v2 getIdentity',
        (name) => call('POST', '/v2/identities.getIdentity', outsider, { identity: name }),
        identity.id,
        newId('id'),
      ],
      [
        'v2 getIdentity by externalId',
        (name) => call('POST', '/v2/identities.getIdentity', outsider, { identity: name }),
        identity.externalId,
        nobody,
      ],
      [
        'v2 listIdentities',
        (name) => call('POST', '/v2/identities.listIdentities', outsider, { search: name }),
        identity.externalId,
        nobody,
      ],
      [
        'v1 ratelimits.limit',
        (name) =>
          call('POST', '/v1/ratelimits.limit', outsider, {
            namespace: name,
            identifier: 'x',
            limit: 1,
            duration: 60_000,
          }),
        namespace,
        `never-${randomUUID()}`,
      ],
      [
        'v1 ratelimits.getOverride',
        (name) => call('GET', `/v1/ratelimits.getOverride?namespaceName=${name}&identifier=x`, outsider),
        namespace,
        `never-${randomUUID()}`,
      ],
      [
        'v2 ratelimit.limit',
        (name) =>
          call('POST', '/v2/ratelimit.limit', outsider, {
            namespace: name,
            identifier: 'x',
            limit: 1,
            duration: 60_000,
          }),
        namespace,
        `never-${randomUUID()}`,
      ],
    ]
    for (const [what, ask, existing, missing] of pairs) {
      const [found, absent] = [refusalOf(await ask(existing)), refusalOf(await ask(missing))]
      expect(found.status, what).toBe(403)
      expect(found, what).toEqual(absent)
      expect(JSON.stringify(found), what).not.toContain(identity.id)
    }
  })
})
