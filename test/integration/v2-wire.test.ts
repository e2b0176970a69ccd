import { beforeAll, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { TEST_ROOT_KEY } from '../support/apps.js'
import { ADMIN_HEADERS, onBothStores } from '../support/both-stores.js'
import { unkeySdk } from '../support/unkey-sdk.js'

/** Unkey v2's wire format: the envelope, problem bodies with the SDK's content types, v2's auth statuses. */
onBothStores('the v2 wire format', {}, (stack) => {
  const post = async (operation: string, payload: object | string, headers: Record<string, string> = ADMIN_HEADERS) => {
    const response = await stack.controlPlane.app.inject({ method: 'POST', url: `/v2/${operation}`, headers, payload })
    return { status: response.statusCode, type: response.headers['content-type'], body: response.json() }
  }
  let readOnly: Record<string, string>
  beforeAll(async () => {
    const { key, hash } = generateRootKey()
    const rootKeyRecord = { id: newId('root'), hash, permissions: ['api.*.read_api'], createdAt: 1 }
    await stack.backend.store.rootKeys.createRootKey(rootKeyRecord)
    readOnly = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  })

  it('answers in the envelope, meta.requestId equal to X-Request-Id', async () => {
    const created = await post('apis.createApi', { name: 'v2 api' })
    expect(created).toMatchObject({ status: 200, body: { meta: { requestId: expect.stringMatching(/^req_/) } } })
    expect(Object.keys(created.body.data)).toEqual(['apiId'])
    const read = await stack.controlPlane.app.inject({
      method: 'POST',
      url: '/v2/apis.getApi',
      headers: ADMIN_HEADERS,
      payload: { apiId: created.body.data.apiId },
    })
    expect(read.json()).toEqual({
      meta: { requestId: read.headers['x-request-id'] },
      data: { id: created.body.data.apiId, name: 'v2 api' },
    })
  })

  it('a missing or malformed Authorization header is 400, an unknown root key 401, a missing permission 403', async () => {
    const missing = await post('apis.getApi', { apiId: 'api_x' }, { 'content-type': 'application/json' })
    expect(missing).toMatchObject({
      status: 400,
      type: 'application/json; charset=utf-8',
      body: {
        meta: { requestId: expect.stringMatching(/^req_/) },
        error: {
          title: 'Bad Request',
          status: 400,
          type: 'https://unkey.com/docs/errors/unkey/authentication/missing',
          errors: [{ location: 'header.authorization', message: expect.any(String) }],
        },
      },
    })
    const malformed = await post('apis.getApi', { apiId: 'api_x' }, { ...ADMIN_HEADERS, authorization: 'Basic abc' })
    expect(malformed.body.error).toMatchObject({
      status: 400,
      type: expect.stringMatching(/authentication\/malformed$/),
    })
    const unknown = await post('apis.getApi', { apiId: 'api_x' }, { ...ADMIN_HEADERS, authorization: 'Bearer nope' })
    expect(unknown).toMatchObject({ status: 401, body: { error: { title: 'Unauthorized', status: 401 } } })
    const forbidden = await post('apis.createApi', { name: 'not allowed' }, readOnly)
    expect(forbidden).toMatchObject({
      status: 403,
      type: 'application/json; charset=utf-8',
      body: {
        error: {
          title: 'Insufficient Permissions',
          status: 403,
          type: expect.stringMatching(/insufficient_permissions$/),
        },
      },
    })
    expect(forbidden.body.error.errors).toBeUndefined()
  })

  it('a 400 lists each failed check with its location; a 404 names the record', async () => {
    const bad = await post('apis.createApi', { name: 'ab' })
    expect(bad).toMatchObject({
      status: 400,
      body: {
        error: {
          title: 'Bad Request',
          type: 'https://unkey.com/docs/errors/unkey/application/invalid_input',
          errors: [{ location: 'body.name', message: 'must be at least 3 characters' }],
        },
      },
    })
    const notJson = await post('apis.createApi', '{"name":')
    expect(notJson).toMatchObject({ status: 400, body: { error: { errors: [{ location: 'body' }] } } })
    const missing = await post('apis.getApi', { apiId: 'api_missing' })
    expect(missing).toMatchObject({
      status: 404,
      body: { error: { title: 'Not Found', type: 'https://unkey.com/docs/errors/unkey/data/api_not_found' } },
    })
  })

  it('an unknown v2 operation is a 404 in the problem shape, suggesting the v2 operation meant', async () => {
    const typo = await post('apis.getapi', { apiId: 'x' })
    expect(typo).toMatchObject({ status: 404, body: { error: { status: 404 } } })
    expect(typo.body.error.detail).toContain('did you mean apis.getApi?')
  })

  it('liveness answers without a root key', async () => {
    const live = await stack.controlPlane.app.inject({ method: 'GET', url: '/v2/liveness' })
    expect(live.json()).toEqual({ meta: { requestId: live.headers['x-request-id'] }, data: { message: 'OK' } })
  })

  it('v1 keeps its own shapes: 403 for a missing root key, {error:{code}} bodies', async () => {
    const v1 = await stack.post('apis.createApi', { name: 'v1 api' }, undefined, { 'content-type': 'application/json' })
    expect(v1).toMatchObject({ status: 403, body: { error: { code: 'UNAUTHORIZED' } } })
  })

  it("Unkey's SDK reads the answers and the errors as typed values", async () => {
    const sdk = unkeySdk(stack.controlPlane, TEST_ROOT_KEY)
    const created = await sdk.apis.createApi({ name: 'sdk api' })
    expect(created.data.apiId).toMatch(/^api_/)
    expect((await sdk.apis.getApi({ apiId: created.data.apiId })).data.name).toBe('sdk api')
    await expect(sdk.apis.getApi({ apiId: 'api_missing' })).rejects.toMatchObject({
      name: 'NotFoundErrorResponse',
      data$: { error: { status: 404 } },
    })
    await expect(unkeySdk(stack.controlPlane, 'wrong').apis.getApi({ apiId: 'api_x' })).rejects.toMatchObject({
      name: 'UnauthorizedErrorResponse',
    })
  })
})
