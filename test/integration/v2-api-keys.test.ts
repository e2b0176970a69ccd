import type { Unkey } from '@unkey/api'
import { beforeAll, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { TEST_ROOT_KEY } from '../support/apps.js'
import { ADMIN_HEADERS, onBothStores } from '../support/both-stores.js'
import { unkeySdk } from '../support/unkey-sdk.js'
import { waitFor } from '../support/wait-for.js'

/** Unkey v2's apis.listKeys (paged as the SDK pages) and apis.deleteApi, over the keys of both wire formats. */
onBothStores('v2 apis.listKeys and apis.deleteApi', {}, (stack) => {
  let sdk: Unkey
  beforeAll(() => {
    sdk = unkeySdk(stack.controlPlane, TEST_ROOT_KEY)
  })
  const newApi = async () => (await sdk.apis.createApi({ name: 'listed' })).data.apiId
  const rootKeyWith = async (...permissions: string[]) => {
    const { key, hash } = generateRootKey()
    await stack.backend.store.rootKeys.createRootKey({ id: newId('root'), hash, permissions, createdAt: Date.now() })
    return unkeySdk(stack.controlPlane, key)
  }
  const post = async (operation: string, payload: object) => {
    const response = await stack.controlPlane.app.inject({
      method: 'POST',
      url: `/v2/${operation}`,
      headers: ADMIN_HEADERS,
      payload,
    })
    return { status: response.statusCode, body: response.json() }
  }
  /** Every page the SDK fetches while a cursor comes back, as [keyIds, pagination] per page. */
  const pages = async (request: Parameters<Unkey['apis']['listKeys']>[0]) => {
    const seen: { keyIds: string[]; pagination: { cursor?: string; hasMore: boolean } }[] = []
    for await (const page of await sdk.apis.listKeys(request)) {
      seen.push({ keyIds: page.result.data.map((key) => key.keyId), pagination: page.result.pagination })
    }
    return seen
  }

  it('the SDK pages through every key, the last page with no cursor, even when it is full', async () => {
    const apiId = await newApi()
    const made: string[] = []
    for (let i = 0; i < 5; i++) made.push((await sdk.keys.createKey({ apiId, name: `k${i}` })).data.keyId)
    // One made through v1 is listed too.
    made.push((await stack.post('keys.createKey', { apiId, name: 'k5' })).body.keyId)
    const byTwo = await pages({ apiId, limit: 2 })
    expect(byTwo.map((page) => page.keyIds)).toEqual([made.slice(0, 2), made.slice(2, 4), made.slice(4, 6)])
    expect(byTwo.map((page) => page.pagination)).toEqual([
      { cursor: made[1], hasMore: true },
      { cursor: made[3], hasMore: true },
      { hasMore: false },
    ])
    const byFive = await pages({ apiId, limit: 5 })
    expect(byFive.map((page) => page.keyIds.length)).toEqual([5, 1])
    const all = await pages({ apiId })
    expect(all).toEqual([{ keyIds: made, pagination: { hasMore: false } }])
    const { body } = await post('apis.listKeys', { apiId, limit: 6 })
    expect(body.pagination).toEqual({ hasMore: false })
    expect(body.data[5]).toEqual({
      keyId: made[5],
      start: expect.any(String),
      enabled: true,
      name: 'k5',
      createdAt: expect.any(Number),
    })
  })

  it('filters by externalId; an owner with no keys lists none', async () => {
    const apiId = await newApi()
    const owned = (await sdk.keys.createKey({ apiId, externalId: 'owner-a', credits: { remaining: 2 } })).data.keyId
    await sdk.keys.createKey({ apiId, externalId: 'owner-b' })
    await sdk.keys.createKey({ apiId })
    const [page] = await pages({ apiId, externalId: 'owner-a' })
    expect(page?.keyIds).toEqual([owned])
    const { body } = await post('apis.listKeys', { apiId, externalId: 'owner-a' })
    expect(body.data[0]).toMatchObject({ credits: { remaining: 2 }, identity: { externalId: 'owner-a' } })
    expect(await pages({ apiId, externalId: 'nobody' })).toEqual([{ keyIds: [], pagination: { hasMore: false } }])
  })

  it('listKeys: decrypt is 412, read_key without read_api the 404 of an unknown api, an unknown field 400', async () => {
    const apiId = await newApi()
    expect((await post('apis.listKeys', { apiId, decrypt: true })).status).toBe(412)
    expect((await post('apis.listKeys', { apiId, revalidateKeysCache: true })).status).toBe(200)
    expect((await post('apis.listKeys', { apiId, ownerId: 'x' })).status).toBe(400)
    expect((await post('apis.listKeys', { apiId, limit: 101 })).status).toBe(400)
    // A root key that may not list the api's keys learns nothing of it: the answer of an api that does not exist.
    const keysOnly = await rootKeyWith(`api.${apiId}.read_key`)
    const hidden = {
      name: 'NotFoundErrorResponse',
      data$: { error: { type: 'https://unkey.com/docs/errors/unkey/data/api_not_found' } },
    }
    await expect(keysOnly.apis.listKeys({ apiId })).rejects.toMatchObject(hidden)
    await expect(keysOnly.apis.listKeys({ apiId: 'api_missing' })).rejects.toMatchObject(hidden)
    await expect(keysOnly.keys.createKey({ apiId })).rejects.toMatchObject(hidden)
    const both = await rootKeyWith(`api.${apiId}.read_key`, `api.${apiId}.read_api`)
    expect((await both.apis.listKeys({ apiId })).result.data).toEqual([])
    await expect(sdk.apis.listKeys({ apiId: 'api_missing' })).rejects.toMatchObject({
      name: 'NotFoundErrorResponse',
      data$: { error: { type: 'https://unkey.com/docs/errors/unkey/data/api_not_found' } },
    })
  })

  it('deleteApi: every key of it stops verifying; a second delete is 404; 403 without delete_api', async () => {
    const apiId = await newApi()
    const { data } = await sdk.keys.createKey({ apiId })
    expect((await stack.verify({ key: data.key })).valid).toBe(true)
    const reader = await rootKeyWith('api.*.read_api')
    await expect(reader.apis.deleteApi({ apiId })).rejects.toMatchObject({ name: 'ForbiddenErrorResponse' })
    expect((await sdk.apis.deleteApi({ apiId })).data).toEqual({})
    await waitFor(
      async () => (await stack.verify({ key: data.key })).code === 'NOT_FOUND',
      'the delete to reach the verifier',
    )
    await expect(sdk.apis.deleteApi({ apiId })).rejects.toMatchObject({
      name: 'NotFoundErrorResponse',
      data$: { error: { type: 'https://unkey.com/docs/errors/unkey/data/api_not_found' } },
    })
    await expect(sdk.apis.getApi({ apiId })).rejects.toMatchObject({ name: 'NotFoundErrorResponse' })
    expect((await post('apis.deleteApi', { apiId, force: true })).status).toBe(400)
  })
})
