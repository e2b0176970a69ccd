import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { HostLookup } from '../../control-plane/webhooks/delivery/address-policy.js'
import { ENDPOINT_CHANGE_TRIES } from '../../control-plane/webhooks/endpoints/endpoint-change.js'
import { MAX_WEBHOOK_ENDPOINTS, WEBHOOK_EVENT_TYPES, type WebhookEndpoint } from '../../shared/webhook.js'
import {
  capturedLogger,
  ManualClock,
  openBackend,
  startTestControlPlane,
  TEST_ROOT_KEY,
  type Backend,
  type TestServer,
} from '../support/apps.js'
import { useRedisServer } from '../support/redis-server.js'
import { overriding } from '../support/store-overrides.js'

/**
 * The webhooks.* endpoint calls through the API, on both stores: what each call answers and stores, the address
 * policy, the endpoint cap, scoped root keys, and that a secret is in no answer but the two that issue it, no audit
 * entry and no log line. Who may call each route at all is route-security.test.ts's part.
 */
const redis = useRedisServer()

/** The names the control planes resolve here, as DNS would: one public host, one private, and localhost. */
const NAMES: Record<string, string[]> = {
  'hooks.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'billing.internal': ['10.0.0.7'],
  'split.example.com': ['93.184.215.14', '169.254.169.254'],
  localhost: ['127.0.0.1', '::1'],
}
const hostLookup: HostLookup = async (hostname) => {
  const addresses = NAMES[hostname]
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
}

const ENDPOINT_URL = 'https://hooks.example.com/keygate'
/** What a refusal of an address that is only private adds: the setting that would allow it. */
const ALLOW_PRIVATE =
  '; to deliver inside your own network, start the control plane with WEBHOOK_ALLOW_PRIVATE=true (--webhook-allow-private)'

interface Answer {
  status: number
  body: any
}

for (const storeKind of ['memory', 'redis'] as const) {
  describe(`webhook endpoints on the ${storeKind} store`, () => {
    const clock = new ManualClock()
    const { log, lines } = capturedLogger()
    let backend: Backend
    /** The default policy: public addresses only. */
    let server: TestServer
    /** WEBHOOK_ALLOW_PRIVATE's: private addresses too, on the same store. */
    let permissive: TestServer

    beforeAll(async () => {
      backend = await openBackend(storeKind === 'redis' ? redis.url : undefined)
      server = await startTestControlPlane({ backend, clock, log, hostLookup })
      permissive = await startTestControlPlane({
        backend,
        clock,
        log,
        hostLookup,
        webhookPolicy: { allowPrivateAddresses: true },
      })
    })
    afterAll(async () => {
      await permissive?.close()
      await server?.close()
      await backend?.close()
    })
    // Each test starts from no endpoint: the cap counts them all.
    beforeEach(async () => {
      const { webhooks } = backend.store
      await Promise.all((await webhooks.listEndpoints()).map((endpoint) => webhooks.deleteEndpoint(endpoint.id)))
    })

    async function call(
      method: 'GET' | 'POST',
      path: string,
      payload?: object,
      rootKey = TEST_ROOT_KEY,
      to = server,
    ): Promise<Answer> {
      const response = await to.app.inject({
        method,
        url: `/v1/${path}`,
        headers: { authorization: `Bearer ${rootKey}` },
        ...(payload === undefined ? {} : { payload }),
      })
      return { status: response.statusCode, body: response.json() }
    }
    const post = (path: string, payload: object, rootKey?: string, to?: TestServer) =>
      call('POST', path, payload, rootKey, to)
    const get = (path: string, rootKey?: string) => call('GET', path, undefined, rootKey)
    const error = (answer: Answer) => ({ status: answer.status, code: answer.body.error?.code })

    async function create(body: object = { url: ENDPOINT_URL }): Promise<{ endpointId: string; secret: string }> {
      const made = await post('webhooks.createEndpoint', body)
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      return made.body
    }
    async function rootKey(permissions: string[]): Promise<string> {
      const made = await post('rootKeys.createRootKey', { permissions })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      return made.body.key
    }
    const stored = async (endpointId: string) => (await backend.store.webhooks.getEndpoint(endpointId))!

    describe('happy paths', () => {
      it('creates an endpoint: its id, and the secret that signs, shown this once', async () => {
        const { endpointId, secret } = await create({
          url: 'HTTPS://Hooks.Example.COM:443/keygate',
          description: 'billing service',
          eventTypes: ['key.created', 'key.deleted', 'key.created'],
        })
        expect(endpointId).toMatch(/^whep_[1-9A-HJ-NP-Za-km-z]{22}$/)
        expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
        expect((await stored(endpointId)).secrets).toEqual([{ secret, createdAt: clock.now() }])
        const read = await get(`webhooks.getEndpoint?endpointId=${endpointId}`)
        expect(read).toEqual({
          status: 200,
          body: {
            endpointId,
            url: ENDPOINT_URL,
            description: 'billing service',
            eventTypes: ['key.created', 'key.deleted'],
            apiIds: [],
            enabled: true,
            createdAt: clock.now(),
          },
        })
      })

      it('takes every event type when none is named, and starts disabled when asked', async () => {
        const { endpointId } = await create({ url: ENDPOINT_URL, enabled: false })
        expect((await get(`webhooks.getEndpoint?endpointId=${endpointId}`)).body).toMatchObject({
          eventTypes: [],
          enabled: false,
        })
      })

      it('lists every endpoint, oldest first, never a secret', async () => {
        const first = await create()
        clock.advance(1)
        const second = await create({ url: 'https://hooks.example.com/second', eventTypes: ['identity.created'] })
        const listed = await get('webhooks.listEndpoints')
        expect(listed.status).toBe(200)
        expect(listed.body.endpoints).toEqual([
          {
            endpointId: first.endpointId,
            url: ENDPOINT_URL,
            eventTypes: [],
            apiIds: [],
            enabled: true,
            createdAt: clock.now() - 1,
          },
          {
            endpointId: second.endpointId,
            url: 'https://hooks.example.com/second',
            eventTypes: ['identity.created'],
            apiIds: [],
            enabled: true,
            createdAt: clock.now(),
          },
        ])
        const text = JSON.stringify(listed.body)
        expect(text).not.toContain(first.secret)
        expect(text).not.toContain(second.secret)
        expect(text).not.toContain('whsec_')
      })

      it('updates what is given, clears the description with null, checks the new URL, keeps the secret', async () => {
        const { endpointId, secret } = await create({
          url: ENDPOINT_URL,
          description: 'old',
          eventTypes: ['key.created'],
        })
        clock.advance(1_000)
        const moved = await post('webhooks.updateEndpoint', {
          endpointId,
          url: 'https://hooks.example.com/moved',
          eventTypes: ['key.deleted', 'key.updated'],
        })
        expect(moved).toEqual({ status: 200, body: {} })
        expect((await get(`webhooks.getEndpoint?endpointId=${endpointId}`)).body).toEqual({
          endpointId,
          url: 'https://hooks.example.com/moved',
          description: 'old',
          eventTypes: ['key.deleted', 'key.updated'],
          apiIds: [],
          enabled: true,
          createdAt: clock.now() - 1_000,
          updatedAt: clock.now(),
        })
        expect((await post('webhooks.updateEndpoint', { endpointId, description: null, enabled: false })).status).toBe(
          200,
        )
        const after = await stored(endpointId)
        expect(after).not.toHaveProperty('description')
        expect(after).toMatchObject({ enabled: false, url: 'https://hooks.example.com/moved' })
        expect(after.secrets.map((s) => s.secret)).toEqual([secret])
        // A private address is refused on update as on create: nothing changes.
        const refused = await post('webhooks.updateEndpoint', { endpointId, url: 'http://billing.internal/hook' })
        expect(error(refused)).toEqual({ status: 400, code: 'BAD_REQUEST' })
        expect((await stored(endpointId)).url).toBe('https://hooks.example.com/moved')
      })

      it('deletes an endpoint: gone from reads and the list, a second delete is a 404', async () => {
        const { endpointId } = await create()
        expect(await post('webhooks.deleteEndpoint', { endpointId })).toEqual({ status: 200, body: {} })
        expect(error(await get(`webhooks.getEndpoint?endpointId=${endpointId}`))).toEqual({
          status: 404,
          code: 'NOT_FOUND',
        })
        expect((await get('webhooks.listEndpoints')).body.endpoints).toEqual([])
        expect(await backend.store.webhooks.getEndpoint(endpointId)).toBeNull()
        expect(error(await post('webhooks.deleteEndpoint', { endpointId }))).toEqual({ status: 404, code: 'NOT_FOUND' })
      })

      it('rotates the secret: the new one first, the old one until the grace is over (default a day)', async () => {
        const { endpointId, secret: first } = await create()
        const createdAt = clock.now()
        clock.advance(60_000)
        const rotated = await post('webhooks.rotateSecret', { endpointId })
        expect(rotated.status, JSON.stringify(rotated.body)).toBe(200)
        const second = rotated.body.secret as string
        expect(second).toMatch(/^whsec_/)
        expect(second).not.toBe(first)
        expect((await stored(endpointId)).secrets).toEqual([
          { secret: second, createdAt: clock.now() },
          { secret: first, createdAt, expiresAt: clock.now() + 86_400_000 },
        ])
        clock.advance(1_000)
        const third = (await post('webhooks.rotateSecret', { endpointId, graceSeconds: 3_600 })).body.secret
        expect((await stored(endpointId)).secrets).toEqual([
          { secret: third, createdAt: clock.now() },
          { secret: second, createdAt: clock.now() - 1_000, expiresAt: clock.now() + 3_600_000 },
          // Its day of grace is cut to the new rotation's hour: a rotation never leaves an older secret signing longer.
          { secret: first, createdAt, expiresAt: clock.now() + 3_600_000 },
        ])
        // A leaked secret: no grace, every other secret dropped now.
        const fourth = (await post('webhooks.rotateSecret', { endpointId, graceSeconds: 0 })).body.secret
        expect((await stored(endpointId)).secrets).toEqual([{ secret: fourth, createdAt: clock.now() }])
        const read = JSON.stringify(await get(`webhooks.getEndpoint?endpointId=${endpointId}`))
        for (const secret of [first, second, third, fourth]) expect(read).not.toContain(secret)
      })

      it('refuses a grace beyond 7 days', async () => {
        const { endpointId } = await create()
        const answer = await post('webhooks.rotateSecret', { endpointId, graceSeconds: 7 * 86_400 + 1 })
        expect(error(answer)).toEqual({ status: 400, code: 'BAD_REQUEST' })
        expect(answer.body.error.message).toBe('graceSeconds: must be <= 604800')
      })
    })

    describe('the address policy', () => {
      const refusals: [string, string, string][] = [
        ['another scheme', 'ftp://hooks.example.com/x', 'url: must be an http or https URL, not ftp'],
        [
          'credentials in it',
          'https://user:pass@hooks.example.com/x',
          'url: must not hold credentials (user:password@): they would show wherever the endpoint is listed',
        ],
        ['no URL at all', 'hooks.example.com/x', 'url: is not a URL'],
        [
          'a host that does not resolve',
          'https://nowhere.example/x',
          'url: nowhere.example does not resolve to an address',
        ],
        [
          'a host that resolves to a private address',
          'http://billing.internal/hook',
          `url: billing.internal resolves to 10.0.0.7, a private address, not a public one${ALLOW_PRIVATE}`,
        ],
        [
          'a host with one public and one link-local address',
          'https://split.example.com/hook',
          `url: split.example.com resolves to 169.254.169.254, a link-local address, not a public one${ALLOW_PRIVATE}`,
        ],
        [
          'a loopback literal',
          'http://127.0.0.1:8080/hook',
          `url: 127.0.0.1 is a loopback address, not a public one${ALLOW_PRIVATE}`,
        ],
        [
          'an IPv6 loopback literal',
          'http://[::1]/hook',
          `url: ::1 is a loopback address, not a public one${ALLOW_PRIVATE}`,
        ],
        [
          'an IPv4-mapped loopback',
          'http://[::ffff:127.0.0.1]/hook',
          `url: ::ffff:7f00:1 is a loopback address, not a public one${ALLOW_PRIVATE}`,
        ],
      ]
      it.each(refusals)('refuses %s (400 naming url), and stores nothing', async (_what, url, message) => {
        const answer = await post('webhooks.createEndpoint', { url })
        expect(error(answer)).toEqual({ status: 400, code: 'BAD_REQUEST' })
        expect(answer.body.error.message).toBe(message)
        expect(await backend.store.webhooks.listEndpoints()).toEqual([])
      })

      it('refuses a URL longer than 2048 characters', async () => {
        const answer = await post('webhooks.createEndpoint', { url: `https://hooks.example.com/${'a'.repeat(2048)}` })
        expect(error(answer)).toEqual({ status: 400, code: 'BAD_REQUEST' })
        expect(answer.body.error.message).toBe('url: must be at most 2048 characters')
      })

      it('takes private addresses where the operator allows them, never the unspecified address', async () => {
        for (const url of ['http://billing.internal/hook', 'http://localhost:3000/hook', 'http://10.1.2.3/hook']) {
          const made = await post('webhooks.createEndpoint', { url }, TEST_ROOT_KEY, permissive)
          expect(made.status, `${url}: ${JSON.stringify(made.body)}`).toBe(200)
          expect((await stored(made.body.endpointId)).url).toBe(url)
        }
        const unspecified = await post(
          'webhooks.createEndpoint',
          { url: 'http://0.0.0.0/h' },
          TEST_ROOT_KEY,
          permissive,
        )
        expect(unspecified.body.error.message).toBe('url: 0.0.0.0 is an unspecified address')
      })
    })

    describe('errors', () => {
      it('refuses an unknown event type, listing the known ones', async () => {
        const answer = await post('webhooks.createEndpoint', {
          url: ENDPOINT_URL,
          eventTypes: ['key.created', 'key.exploded'],
        })
        expect(error(answer)).toEqual({ status: 400, code: 'BAD_REQUEST' })
        expect(answer.body.error.message).toBe(
          `eventTypes.1: must be one of ${WEBHOOK_EVENT_TYPES.map((type) => JSON.stringify(type)).join(', ')}`,
        )
      })

      it(`refuses endpoint ${MAX_WEBHOOK_ENDPOINTS + 1} with a 412, and takes one again after a delete`, async () => {
        const made: string[] = []
        for (let i = 0; i < MAX_WEBHOOK_ENDPOINTS; i++) made.push((await create()).endpointId)
        const over = await post('webhooks.createEndpoint', { url: ENDPOINT_URL })
        expect(error(over)).toEqual({ status: 412, code: 'PRECONDITION_FAILED' })
        expect(over.body.error.message).toBe(
          `there are ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints already, the most there can be: delete one first`,
        )
        expect(await backend.store.webhooks.listEndpoints()).toHaveLength(MAX_WEBHOOK_ENDPOINTS)
        await post('webhooks.deleteEndpoint', { endpointId: made[0]! })
        await create()
      })

      it('answers 404 NOT_FOUND for an endpoint that does not exist, on every call that names one', async () => {
        const endpointId = 'whep_1CX8vvRBsU5tVw7XyZaBcD'
        const answers = [
          await get(`webhooks.getEndpoint?endpointId=${endpointId}`),
          await post('webhooks.updateEndpoint', { endpointId, enabled: false }),
          await post('webhooks.deleteEndpoint', { endpointId }),
          await post('webhooks.rotateSecret', { endpointId }),
        ]
        for (const answer of answers) {
          expect(error(answer)).toEqual({ status: 404, code: 'NOT_FOUND' })
          expect(answer.body.error.message).toBe(`webhook endpoint ${endpointId} not found`)
        }
      })
    })

    describe('root keys scoped to endpoints', () => {
      it('shows a root key with webhook.<endpointId>.read_endpoint that endpoint only; others are not found', async () => {
        const mine = await create({ url: ENDPOINT_URL, description: 'mine' })
        const other = await create({ url: ENDPOINT_URL, description: 'other' })
        const scoped = await rootKey([`webhook.${mine.endpointId}.read_endpoint`])
        const listed = await get('webhooks.listEndpoints', scoped)
        expect(listed.status).toBe(200)
        expect(listed.body.endpoints.map((e: { endpointId: string }) => e.endpointId)).toEqual([mine.endpointId])
        expect((await get(`webhooks.getEndpoint?endpointId=${mine.endpointId}`, scoped)).status).toBe(200)
        // The other endpoint is answered as one that does not exist: the same body but its id.
        const hidden = await get(`webhooks.getEndpoint?endpointId=${other.endpointId}`, scoped)
        const absent = await get('webhooks.getEndpoint?endpointId=whep_absent', scoped)
        expect(error(hidden)).toEqual({ status: 404, code: 'NOT_FOUND' })
        expect(hidden.body.error.message).toBe(absent.body.error.message.replace('whep_absent', other.endpointId))
      })

      it('lets a root key scoped to one endpoint change only that one', async () => {
        const mine = await create()
        const other = await create()
        const scoped = await rootKey([`webhook.${mine.endpointId}.*`])
        expect(
          (await post('webhooks.updateEndpoint', { endpointId: mine.endpointId, enabled: false }, scoped)).status,
        ).toBe(200)
        for (const [path, body] of [
          ['webhooks.updateEndpoint', { endpointId: other.endpointId, enabled: false }],
          ['webhooks.rotateSecret', { endpointId: other.endpointId, graceSeconds: 0 }],
          ['webhooks.deleteEndpoint', { endpointId: other.endpointId }],
        ] as const)
          expect(error(await post(path, body, scoped)), path).toEqual({ status: 404, code: 'NOT_FOUND' })
        expect(await stored(other.endpointId)).toMatchObject({ enabled: true, secrets: [{ secret: other.secret }] })
        // Creating names no endpoint: only webhook.*.create_endpoint does.
        expect(error(await post('webhooks.createEndpoint', { url: ENDPOINT_URL }, scoped))).toEqual({
          status: 403,
          code: 'INSUFFICIENT_PERMISSIONS',
        })
      })

      it('refuses (403) a root key with no webhook permission, api.*.* included, whichever endpoint it names', async () => {
        const { endpointId } = await create()
        for (const permissions of [['api.*.*'], ['webhook.*.update_endpoint']]) {
          const key = await rootKey(permissions)
          const list = await get('webhooks.listEndpoints', key)
          expect(error(list)).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS' })
          expect(list.body.error.message).toBe('the root key needs webhook.*.read_endpoint')
          for (const id of [endpointId, 'whep_absent']) {
            const read = await get(`webhooks.getEndpoint?endpointId=${id}`, key)
            expect(read.body.error.message).toBe('the root key needs webhook.*.read_endpoint')
          }
        }
      })
    })

    describe('endpoints scoped to apis, and the rights to read what they are sent', () => {
      async function newApi(name: string): Promise<string> {
        const made = await post('apis.createApi', { name })
        expect(made.status, JSON.stringify(made.body)).toBe(200)
        return made.body.apiId
      }
      const forbidden = { status: 403, code: 'INSUFFICIENT_PERMISSIONS' }

      it('stores, lists, reads back and audits the apis an endpoint is scoped to, each once', async () => {
        const [first, second] = [await newApi('scoped one'), await newApi('scoped two')]
        const { endpointId } = await create({ url: ENDPOINT_URL, apiIds: [first, second, first] })
        expect((await get(`webhooks.getEndpoint?endpointId=${endpointId}`)).body.apiIds).toEqual([first, second])
        expect((await get('webhooks.listEndpoints')).body.endpoints[0].apiIds).toEqual([first, second])
        expect(await post('webhooks.updateEndpoint', { endpointId, apiIds: [second] })).toEqual({
          status: 200,
          body: {},
        })
        expect((await stored(endpointId)).apiIds).toEqual([second])
        const entries = (await get('audit.list?limit=2')).body.entries
        expect(entries).toMatchObject([
          { action: 'webhooks.updateEndpoint', before: { apiIds: [first, second] }, after: { apiIds: [second] } },
          { action: 'webhooks.createEndpoint', after: { endpointId, apiIds: [first, second] } },
        ])
        // Empty: unscoped again.
        await post('webhooks.updateEndpoint', { endpointId, apiIds: [] })
        expect((await get(`webhooks.getEndpoint?endpointId=${endpointId}`)).body.apiIds).toEqual([])
      })

      it('refuses an api that does not exist (404), more than 100 apis, and types about no api in a scope (400)', async () => {
        const apiId = await newApi('scoped')
        const absent = await post('webhooks.createEndpoint', { url: ENDPOINT_URL, apiIds: [apiId, 'api_absent'] })
        expect(error(absent)).toEqual({ status: 404, code: 'NOT_FOUND' })
        expect(absent.body.error.message).toBe('api api_absent not found')
        const many = Array.from({ length: 101 }, (_, i) => `api_${i}`)
        const tooMany = await post('webhooks.createEndpoint', { url: ENDPOINT_URL, apiIds: many })
        expect(error(tooMany)).toEqual({ status: 400, code: 'BAD_REQUEST' })
        expect(tooMany.body.error.message).toBe('apiIds: must have at most 100 items')
        const noApi = await post('webhooks.createEndpoint', {
          url: ENDPOINT_URL,
          apiIds: [apiId],
          eventTypes: ['key.created', 'identity.created', 'rootKey.revoked'],
        })
        expect(error(noApi)).toEqual({ status: 400, code: 'BAD_REQUEST' })
        expect(noApi.body.error.message).toBe(
          'eventTypes: identity.created, rootKey.revoked are about no api: an endpoint scoped to apis (apiIds) is ' +
            'never sent such events; leave them out, or leave apiIds empty',
        )
        expect(await backend.store.webhooks.listEndpoints()).toEqual([])
        // Scoping an endpoint that takes identity events: the apis are what is refused.
        const { endpointId } = await create({ url: ENDPOINT_URL, eventTypes: ['identity.created'] })
        const scoped = await post('webhooks.updateEndpoint', { endpointId, apiIds: [apiId] })
        expect(error(scoped)).toEqual({ status: 400, code: 'BAD_REQUEST' })
        expect(scoped.body.error.message).toMatch(/^apiIds: identity\.created is about no api/)
        expect((await stored(endpointId)).apiIds).toEqual([])
        // Rescoped to an api that does not exist: 404, as on create, and the scope stays.
        const keyEvents = await create({ url: ENDPOINT_URL, apiIds: [apiId] })
        const absentOnUpdate = await post('webhooks.updateEndpoint', {
          endpointId: keyEvents.endpointId,
          apiIds: [apiId, 'api_absent'],
        })
        expect(error(absentOnUpdate)).toEqual({ status: 404, code: 'NOT_FOUND' })
        expect(absentOnUpdate.body.error.message).toBe('api api_absent not found')
        expect((await stored(keyEvents.endpointId)).apiIds).toEqual([apiId])
      })

      it('refuses (403) to make an endpoint for a root key with webhook rights only: it would read every api', async () => {
        await newApi('anyone')
        const webhookOnly = await rootKey(['webhook.*.create_endpoint', 'webhook.*.replay'])
        const answer = await post('webhooks.createEndpoint', { url: ENDPOINT_URL }, webhookOnly)
        expect(error(answer)).toEqual(forbidden)
        expect(answer.body.error.message).toBe(
          'the root key needs api.*.read_key and identity.*.read_identity and rootkey.*.manage to be sent what the ' +
            'endpoint receives (scope it to apis it may read with apiIds, or to event types it may read with eventTypes)',
        )
        expect(await backend.store.webhooks.listEndpoints()).toEqual([])
      })

      it('makes a scoped endpoint for a root key that reads those apis, and nothing wider', async () => {
        const [mine, theirs] = [await newApi('mine'), await newApi('theirs')]
        const reader = await rootKey(['webhook.*.create_endpoint', `api.${mine}.read_key`])
        const made = await post('webhooks.createEndpoint', { url: ENDPOINT_URL, apiIds: [mine] }, reader)
        expect(made.status, JSON.stringify(made.body)).toBe(200)
        const refusals: [object, string][] = [
          [{ apiIds: [mine, theirs] }, `the root key needs api.${theirs}.read_key `],
          [{ eventTypes: ['key.created'] }, 'the root key needs api.*.read_key '],
          [{ eventTypes: ['identity.created'] }, 'the root key needs identity.*.read_identity '],
          [{ eventTypes: ['rootKey.created'] }, 'the root key needs rootkey.*.manage '],
        ]
        for (const [scope, needs] of refusals) {
          const refused = await post('webhooks.createEndpoint', { url: ENDPOINT_URL, ...scope }, reader)
          expect(error(refused), JSON.stringify(scope)).toEqual(forbidden)
          expect(refused.body.error.message.slice(0, needs.length)).toBe(needs)
        }
        // An unscoped endpoint of the types it may read: key events need every api's keys.
        const everyApi = await rootKey(['webhook.*.create_endpoint', 'api.*.read_key', 'identity.*.read_identity'])
        const keysAndIdentities = await post(
          'webhooks.createEndpoint',
          { url: ENDPOINT_URL, eventTypes: ['key.created', 'identity.deleted'] },
          everyApi,
        )
        expect(keysAndIdentities.status, JSON.stringify(keysAndIdentities.body)).toBe(200)
        expect(error(await post('webhooks.createEndpoint', { url: ENDPOINT_URL }, everyApi))).toEqual(forbidden)
        expect(await backend.store.webhooks.listEndpoints()).toHaveLength(2)
      })

      it('lets a root key widen or redirect an endpoint only to what it reads; disabling and describing need no reads', async () => {
        const [mine, theirs] = [await newApi('mine'), await newApi('theirs')]
        const scoped = await create({ url: ENDPOINT_URL, apiIds: [mine] })
        const unscoped = await create({ url: ENDPOINT_URL })
        const updater = await rootKey(['webhook.*.update_endpoint', `api.${mine}.read_key`])
        const update = (body: object) => post('webhooks.updateEndpoint', body, updater)
        for (const body of [
          { endpointId: scoped.endpointId, apiIds: [mine, theirs] },
          { endpointId: scoped.endpointId, apiIds: [] },
          { endpointId: unscoped.endpointId, url: 'https://hooks.example.com/mine' },
          { endpointId: unscoped.endpointId, eventTypes: ['key.created'] },
          { endpointId: unscoped.endpointId, enabled: true },
        ])
          expect(error(await update(body)), JSON.stringify(body)).toEqual(forbidden)
        expect(await stored(scoped.endpointId)).toMatchObject({ apiIds: [mine], url: ENDPOINT_URL })
        expect(await stored(unscoped.endpointId)).toMatchObject({ eventTypes: [], url: ENDPOINT_URL })
        for (const body of [
          { endpointId: scoped.endpointId, url: 'https://hooks.example.com/mine', eventTypes: ['key.deleted'] },
          { endpointId: unscoped.endpointId, description: 'watched by ops', enabled: false },
        ])
          expect(await update(body), JSON.stringify(body)).toEqual({ status: 200, body: {} })
        expect(await stored(unscoped.endpointId)).toMatchObject({ enabled: false, description: 'watched by ops' })
      })

      it('lets a root key replay only to an endpoint whose events it reads', async () => {
        const mine = await newApi('mine')
        const scoped = await create({ url: ENDPOINT_URL, apiIds: [mine] })
        const unscoped = await create({ url: ENDPOINT_URL })
        const replayer = await rootKey(['webhook.*.replay', `api.${mine}.read_key`])
        const replayed = await post('webhooks.replay', { endpointId: scoped.endpointId, since: 0 }, replayer)
        expect(replayed.status, JSON.stringify(replayed.body)).toBe(200)
        const refused = await post('webhooks.replay', { endpointId: unscoped.endpointId, since: 0 }, replayer)
        expect(error(refused)).toEqual(forbidden)
        expect(refused.body.error.message).toMatch(/^the root key needs api\.\*\.read_key and identity/)
      })
    })

    describe('usage events: opt-in, and analytics to read', () => {
      async function newApi(name: string): Promise<string> {
        const made = await post('apis.createApi', { name })
        expect(made.status, JSON.stringify(made.body)).toBe(200)
        return made.body.apiId
      }
      const forbidden = { status: 403, code: 'INSUFFICIENT_PERMISSIONS' }

      it('takes read_analytics on what an endpoint naming them is sent; one of every type needs none', async () => {
        const [mine, theirs] = [await newApi('mine'), await newApi('theirs')]
        // Every other family's rights: enough for an endpoint of every type, which is sent no usage event.
        const reader = await rootKey([
          'webhook.*.create_endpoint',
          'api.*.read_key',
          'identity.*.read_identity',
          'rootkey.*.manage',
        ])
        const everyType = await post('webhooks.createEndpoint', { url: ENDPOINT_URL }, reader)
        expect(everyType.status, JSON.stringify(everyType.body)).toBe(200)
        const analyst = await rootKey(['webhook.*.create_endpoint', `api.${mine}.read_analytics`])
        const scoped = { url: ENDPOINT_URL, eventTypes: ['usage.hourly', 'usage.daily'], apiIds: [mine] }
        const made = await post('webhooks.createEndpoint', scoped, analyst)
        expect(made.status, JSON.stringify(made.body)).toBe(200)
        const refusals: [string, object, string][] = [
          [reader, { eventTypes: ['usage.hourly'] }, 'the root key needs api.*.read_analytics '],
          [reader, { eventTypes: ['usage.daily'], apiIds: [mine] }, `the root key needs api.${mine}.read_analytics `],
          [analyst, { eventTypes: ['usage.hourly'] }, 'the root key needs api.*.read_analytics '],
          [
            analyst,
            { eventTypes: ['usage.hourly'], apiIds: [mine, theirs] },
            `the root key needs api.${theirs}.read_analytics `,
          ],
        ]
        for (const [key, scope, needs] of refusals) {
          const refused = await post('webhooks.createEndpoint', { url: ENDPOINT_URL, ...scope }, key)
          expect(error(refused), JSON.stringify(scope)).toEqual(forbidden)
          expect(refused.body.error.message.slice(0, needs.length)).toBe(needs)
        }
        expect(await backend.store.webhooks.listEndpoints()).toHaveLength(2)
      })

      it("replays a usage event only to an endpoint that names its type and sums over the event's apis", async () => {
        const mine = await newApi('mine')
        const everyType = await create({ url: ENDPOINT_URL })
        const unscoped = await create({ url: ENDPOINT_URL, eventTypes: ['usage.hourly'] })
        const scoped = await create({ url: ENDPOINT_URL, eventTypes: ['usage.hourly'], apiIds: [mine] })
        const usageOver = async (apiIds: string[] | '*') => {
          const id = `msg_usage_${Math.random().toString(36).slice(2)}`
          const period = { start: clock.now() - 3_600_000, end: clock.now() }
          const data = { externalId: 'acme', period, apiIds, verifications: { valid: 1, total: 1 } }
          await backend.store.webhooks.enqueue(
            { id, type: 'usage.hourly', at: period.end, madeAt: clock.now(), data },
            [],
            clock.now(),
          )
          return id
        }
        const [everyApi, mineOnly] = [await usageOver('*'), await usageOver([mine])]
        const replay = async (endpointId: string, eventId: string) =>
          error(await post('webhooks.replay', { endpointId, eventId }))
        const taken = { status: 200, code: undefined }
        const notTaken = { status: 400, code: 'BAD_REQUEST' }
        expect(await replay(unscoped.endpointId, everyApi)).toEqual(taken)
        expect(await replay(scoped.endpointId, mineOnly)).toEqual(taken)
        // Every api's sums to an endpoint of one api, one api's to an unscoped one, usage to one not naming it.
        expect(await replay(scoped.endpointId, everyApi)).toEqual(notTaken)
        expect(await replay(unscoped.endpointId, mineOnly)).toEqual(notTaken)
        expect(await replay(everyType.endpointId, everyApi)).toEqual(notTaken)
      })
    })

    describe('changes of one endpoint at once', () => {
      /** A control plane on the same store whose reads of endpoints go through `read` (the store's own by default). */
      async function controlPlaneReading(read: (endpointId: string) => Promise<WebhookEndpoint | null>) {
        const store = overriding(backend.store, { webhooks: { getEndpoint: read } })
        return startTestControlPlane({ backend: { ...backend, store }, clock, log, hostLookup })
      }

      // Else a root key that may only describe (no reads) would enable again what an admin has just disabled.
      it('never writes back what another change undid: a description changed across a disable leaves it disabled', async () => {
        // Of a type nothing here makes: a delivery to it would have the control plane's worker read it first, and
        // hold that read instead of the describer's.
        const { endpointId } = await create({ url: ENDPOINT_URL, eventTypes: ['rootKey.rolled'] })
        const describer = await rootKey(['webhook.*.update_endpoint'])
        let reached!: () => void
        const hasRead = new Promise<void>((resolve) => (reached = resolve))
        let release!: () => void
        const released = new Promise<void>((resolve) => (release = resolve))
        let holding = true
        // The describer's control plane has read the endpoint, enabled, when the disable lands.
        const held = await controlPlaneReading(async (id) => {
          const read = await backend.store.webhooks.getEndpoint(id)
          if (holding && id === endpointId) {
            holding = false
            reached()
            await released
          }
          return read
        })
        try {
          const describing = post('webhooks.updateEndpoint', { endpointId, description: 'ops' }, describer, held)
          await hasRead
          expect(await post('webhooks.updateEndpoint', { endpointId, enabled: false })).toEqual({
            status: 200,
            body: {},
          })
          release()
          expect(await describing).toEqual({ status: 200, body: {} })
        } finally {
          await held.close()
        }
        expect(await stored(endpointId)).toMatchObject({ enabled: false, description: 'ops', revision: 2 })
        // The description was made over the disabled endpoint: its audit entry says so.
        const [described] = (await get('audit.list?action=webhooks.updateEndpoint&limit=1')).body.entries
        expect(described).toMatchObject({ before: { enabled: false }, after: { enabled: false, description: 'ops' } })
      })

      it('answers 409 CONFLICT when other changes keep landing first, having written nothing of its own', async () => {
        const { endpointId, secret } = await create({ url: ENDPOINT_URL })
        let others = 0
        // Every read is overtaken at once by another change of the endpoint.
        const overtaken = await controlPlaneReading(async (id) => {
          const read = await backend.store.webhooks.getEndpoint(id)
          if (read) await backend.store.webhooks.replaceEndpoint({ ...read, updatedAt: ++others })
          return read
        })
        try {
          for (const [path, body] of [
            ['webhooks.updateEndpoint', { endpointId, description: 'lost' }],
            ['webhooks.rotateSecret', { endpointId }],
          ] as const) {
            const answer = await post(path, body, TEST_ROOT_KEY, overtaken)
            expect(error(answer), path).toEqual({ status: 409, code: 'CONFLICT' })
            expect(answer.body.error.message).toBe(
              `webhook endpoint ${endpointId} kept changing while this change was made: read it and try again`,
            )
          }
        } finally {
          await overtaken.close()
        }
        // Each call made its change again from every fresh read (a delivery may read the endpoint too).
        expect(others).toBeGreaterThanOrEqual(2 * ENDPOINT_CHANGE_TRIES)
        const after = await stored(endpointId)
        expect(after).not.toHaveProperty('description')
        expect(after.secrets.map((s) => s.secret)).toEqual([secret])
      })
    })

    describe('secrets stay out of the audit log and the logs', () => {
      it('audits every write with the endpoint as the API shows it, and the rotation by dates only', async () => {
        const { endpointId, secret } = await create({ url: ENDPOINT_URL, description: 'audited' })
        await post('webhooks.updateEndpoint', { endpointId, enabled: false })
        const rotated = (await post('webhooks.rotateSecret', { endpointId, graceSeconds: 60 })).body.secret
        await post('webhooks.deleteEndpoint', { endpointId })
        const entries = (await get('audit.list?limit=4')).body.entries
        const view = {
          endpointId,
          url: ENDPOINT_URL,
          description: 'audited',
          eventTypes: [],
          apiIds: [],
          createdAt: clock.now(),
        }
        expect(entries).toMatchObject([
          { action: 'webhooks.deleteEndpoint', rootKeyId: 'root_bootstrap', before: { ...view, enabled: false } },
          {
            action: 'webhooks.rotateSecret',
            after: { endpointId },
            context: {
              graceSeconds: 60,
              secrets: [{ createdAt: clock.now() }, { createdAt: clock.now(), expiresAt: clock.now() + 60_000 }],
            },
          },
          { action: 'webhooks.updateEndpoint', before: { enabled: true }, after: { ...view, enabled: false } },
          { action: 'webhooks.createEndpoint', after: { ...view, enabled: true }, requestId: expect.any(String) },
        ])
        const text = JSON.stringify(entries)
        expect(text).not.toContain(secret)
        expect(text).not.toContain(rotated)
        expect(text).not.toContain('whsec_')
        const logged = lines.join('')
        expect(logged).toContain(endpointId)
        expect(logged).not.toContain(secret)
        expect(logged).not.toContain(rotated)
        expect(logged).not.toContain('whsec_')
      })
    })
  })
}
