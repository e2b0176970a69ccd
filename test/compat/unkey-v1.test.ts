import { createHash, randomInt, randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import {
  ingestAnalytics,
  ManualClock,
  openBackend,
  startTestControlPlane,
  TEST_ROOT_KEY,
  type Backend,
  type TestServer,
} from '../support/apps.js'
import { useAnalyticsEngine } from '../support/analytics-engine.js'
import { namespaceOf } from '../support/ratelimits.js'
import { compatibilityDoc, DOC_PATH, type Verdict } from './unkey-v1-report.js'
import inventory from './unkey-v1-inventory.json' with { type: 'json' }

/**
 * Unkey's own v1 route tests (apps/api/src/routes/{v1,legacy}_*.test.ts at ccfc028d), re-expressed against Keygate:
 * each case below is named after one Unkey test (file > full title), sends what that test sends and asserts what
 * it asserts — status, error code, body fields — in our own words (Unkey's code is AGPL: none of it is copied).
 * Unkey's tests read their database to check a write; these read it back through the API instead.
 *
 * Every Unkey test of the inventory (unkey-v1-inventory.json, made by unkey-v1-inventory.mjs) has exactly one
 * verdict here:
 *   same       Keygate passes it as Unkey wrote it.
 *   deviation  Keygate answers differently on purpose: the case asserts Keygate's answer, and DEVIATIONS says why.
 *   bug        Keygate answers differently by mistake: the case asserts Unkey's answer and is expected to fail
 *              (it.fails), so that the fix turns it red and the verdict must be moved to `same`.
 *   missing    A v1 behaviour Keygate lacks yet, which issue 14 asks for: as `bug`, asserted as Unkey's and it.fails.
 *   n/a        Cannot be said against Keygate (other workspaces, a disabled workspace, encrypted keys, rows only a
 *              database holds, ...): the reason is given.
 *   unserved   The route is not one Keygate serves.
 *   todo       Expressible, but not written in this pass: no claim either way.
 *
 * One normalisation applies everywhere: an error body's `docs` link is Keygate's own page for the code
 * (`<this server>/docs/errors/<CODE>`), where Unkey's tests expect `https://unkey.dev/docs/api-reference/errors/code/<CODE>`.
 *
 * `UNKEY_COMPAT_WRITE=1 npx vitest run test/compat/unkey-v1.test.ts` rewrites docs/unkey-v1-compatibility.md from
 * the verdicts and the results; without it, the file must match what this run would write.
 */

// ---------------------------------------------------------------------------------------------------------------
// Harness: one control plane on the memory store, a clock the cases move by hand.

const clock = new ManualClock(Date.now())
let backend: Backend
let server: TestServer

const engine = useAnalyticsEngine()

beforeAll(async () => {
  backend = await openBackend()
  server = await startTestControlPlane({ backend, clock, analytics: engine.analytics('compat') })
})
afterAll(async () => {
  await server?.close()
  await backend?.close()
})

interface Answer {
  status: number
  body: any
  headers: Record<string, unknown>
}

interface Target {
  server: TestServer
  backend: Backend
}

/** How a request reaches the server beyond its body: extra headers, and the address it comes from (the socket's). */
interface Sent {
  headers?: Record<string, string>
  from?: string
}

async function call(
  target: Target,
  method: 'GET' | 'POST',
  path: string,
  rootKey: string | null,
  body?: unknown,
  sent: Sent = {},
) {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...sent.headers }
  if (rootKey !== null) headers.authorization = `Bearer ${rootKey}`
  const response = await target.server.app.inject({
    method,
    url: path,
    headers,
    ...(method === 'POST' ? { payload: JSON.stringify(body ?? {}) } : {}),
    ...(sent.from ? { remoteAddress: sent.from } : {}),
  })
  let parsed: unknown
  try {
    parsed = response.body === '' ? undefined : response.json()
  } catch {
    parsed = response.body
  }
  return { status: response.statusCode, body: parsed, headers: response.headers } as Answer
}

/** What every Unkey test starts from: a workspace with an api (`userApi`), and root keys made with given roles. */
interface Harness {
  apiId: string
  /** The bootstrap root key (`*`). */
  admin: string
  /** A stored root key with exactly these permissions. */
  rootKey(permissions: string[]): Promise<string>
  /** As the admin, or as `rootKey` (null: without one). */
  post(path: string, body: unknown, rootKey?: string | null): Promise<Answer>
  get(path: string, rootKey?: string | null): Promise<Answer>
  /** verifyKey: no root key; from inject's address (127.0.0.1) unless `sent` says otherwise. */
  verify(body: object, sent?: Sent): Promise<Answer>
  /** A key of the harness's api (or `apiId`), made through keys.createKey as the admin. */
  createKey(fields?: object): Promise<{ keyId: string; key: string }>
  /**
   * A rate-limit namespace of its own, made as v1 makes one (a first ratelimits.limit call, as the admin), and its
   * id read from the store: no v1 call answers a namespace's id.
   */
  namespace(): Promise<{ id: string; name: string }>
  /** Verifications recorded as the ingest inserts the verifiers' rows, into the raw table (the rollups fed by it). */
  count(verifications: Synthetic[]): Promise<void>
  /** Makes the verifications this harness's server answered queryable (its rows handed over and ingested). */
  ingest(): Promise<void>
}
/** One of Unkey's synthetic verifications: a key, a time and an outcome. */
interface Synthetic {
  keyId: string
  time: number
  outcome: 'VALID' | 'RATE_LIMITED' | 'DISABLED'
}

async function harness(target: Target = { server, backend }): Promise<Harness> {
  const post = (path: string, body: unknown, rootKey: string | null = TEST_ROOT_KEY) =>
    call(target, 'POST', `/v1/${path}`, rootKey, body)
  const get = (path: string, rootKey: string | null = TEST_ROOT_KEY) => call(target, 'GET', `/v1/${path}`, rootKey)
  const api = await post('apis.createApi', { name: `unkey-compat-${randomUUID()}` })
  expect(api.status, JSON.stringify(api.body)).toBe(200)
  const apiId = api.body.apiId as string
  return {
    apiId,
    admin: TEST_ROOT_KEY,
    async rootKey(permissions) {
      const { key, hash } = generateRootKey()
      const rootKeyRecord = { id: newId('root'), hash, permissions, createdAt: clock.now() }
      await target.backend.store.rootKeys.createRootKey(rootKeyRecord)
      return key
    },
    post,
    get,
    verify: (body, sent) => call(target, 'POST', '/v1/keys.verifyKey', null, body, sent),
    async createKey(fields = {}) {
      const created = await post('keys.createKey', { apiId, ...fields })
      expect(created.status, JSON.stringify(created.body)).toBe(200)
      return created.body
    },
    async namespace() {
      const name = `ns-${randomUUID()}`
      expectOk(
        await post('ratelimits.limit', { namespace: name, identifier: 'setup', limit: 1, duration: 1_000, cost: 0 }),
      )
      return { id: (await namespaceOf(target.backend, name))!.id, name }
    },
    async count(verifications) {
      const keys = new Map<string, string>()
      for (const keyId of new Set(verifications.map((v) => v.keyId)))
        keys.set(keyId, (await target.backend.store.keys.getKeyById(keyId))?.ownerId ?? '')
      const rows = verifications.map(({ keyId, time, outcome }, i) => ({
        request_id: `req_synthetic_${i}`,
        time,
        workspace_id: 'ws_keygate',
        key_space_id: apiId,
        identity_id: '',
        external_id: keys.get(keyId),
        key_id: keyId,
        outcome,
        tags: [],
        source: 'v1.verifyKey',
        region: 'compat',
        spent_credits: 0,
        latency: 0,
      }))
      await engine.engine.insert('key_verifications_v1', rows, `compat-${randomUUID()}`)
    },
    ingest: () => ingestAnalytics(target.server),
  }
}

/** For the tests that count what a whole workspace holds: a control plane and store of their own. */
function isolated(run: Run): Run {
  return async () => {
    const own = await openBackend()
    const ownServer = await startTestControlPlane({ backend: own, clock })
    try {
      await run(await harness({ server: ownServer, backend: own }))
    } finally {
      await ownServer.close()
      await own.close()
    }
  }
}

/** Keygate's page for the code, on the server that answered (inject() sends `Host: localhost:80`). */
const docsOf = (code: string) => `http://localhost:80/docs/errors/${code}`

/** An error answer as Unkey's tests check it (docs: Keygate's page for the code). */
function expectError(answer: Answer, status: number, code: string, message?: string | RegExp) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status)
  expect(answer.body.error).toMatchObject({ code, docs: docsOf(code) })
  if (typeof message === 'string') expect(answer.body.error.message).toBe(message)
  else if (message) expect(answer.body.error.message).toMatch(message)
}

function expectOk(answer: Answer, status = 200) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status)
}

// ---------------------------------------------------------------------------------------------------------------
// The verdicts.

type Run = (h: Harness) => Promise<void>
interface Entry {
  verdict: Verdict
  reason?: string
  run?: Run
}
const CASES = new Map<string, Entry>()
/** `apis_createApi.error` names v1_apis_createApi.error.test.ts; `legacy_keys_createKey` its legacy file. */
const fileOf = (short: string) => (short.startsWith('legacy_') ? `${short}.test.ts` : `v1_${short}.test.ts`)
const keyOf = (file: string, title: string) => `${file} > ${title}`

function define(short: string, title: string, entry: Entry) {
  const key = keyOf(fileOf(short), title)
  if (CASES.has(key)) throw new Error(`two verdicts for ${key}`)
  CASES.set(key, entry)
}
/** Keygate passes the Unkey test as written. */
const same = (short: string, title: string, run: Run) => define(short, title, { verdict: 'same', run })
/** Keygate answers differently on purpose: `run` asserts Keygate's answer. */
const deviation = (short: string, title: string, reason: string, run: Run) =>
  define(short, title, { verdict: 'deviation', reason, run })
/** Keygate answers differently by mistake: `run` asserts Unkey's answer and fails today. */
const bug = (short: string, title: string, reason: string, run: Run) =>
  define(short, title, { verdict: 'bug', reason, run })
// A v1 behaviour Keygate lacks yet (issue 14 asks for it) would be `define(short, title, { verdict: 'missing', reason,
// run })`, run as `bug` is: none is left.
const na = (short: string, title: string, reason: string) => define(short, title, { verdict: 'n/a', reason })
const todo = (short: string, title: string, reason: string) => define(short, title, { verdict: 'todo', reason })

/** Verdicts given to every test of the inventory that matches, where no case says otherwise. */
const RULES: { file: RegExp; title: RegExp; verdict: Verdict; reason: string }[] = [
  {
    file: /./,
    title: /^disabled workspace > /,
    verdict: 'n/a',
    reason: 'Keygate has one workspace, which cannot be disabled',
  },
  {
    file: /^v1_migrations_enqueueKeys\./,
    title: /./,
    verdict: 'unserved',
    reason: 'migrations.enqueueKeys (asynchronous import) is not served: migrations.createKeys imports synchronously',
  },
  {
    file: /^legacy_/,
    title: /./,
    verdict: 'unserved',
    reason: "the pre-v1 routes (POST /v1/keys, /v1/keys/verify) are not served: they were Unkey's before v1",
  },
]

// ---------------------------------------------------------------------------------------------------------------
// Security: what runCommonRouteTests checks for every route, and each file's "correct roles" table.

const MIGRATION_HASH =
  'Keygate checks that hash.value is a base64 SHA-256 digest (44 characters), after the root key: Unkey stored any string (its test sends `hash` or a UUID; a key with such a hash could never verify), so Keygate answers 400 BAD_REQUEST'
const MESSAGE_KEY_REQUIRED =
  "message in Keygate's words (how to send a root key) where Unkey's says `key required`; status 403 and code UNAUTHORIZED as Unkey's"
/**
 * Giving a key an identity is acting on that identity (its meta is answered by verifyKey, its limits are spent):
 * Keygate asks for the right to read an identity that exists, or to create one. Unkey asks for no identity right.
 */
const IDENTITY_RIGHTS =
  "binding a key to an externalId's identity needs identity.*.read_identity (it exists) or identity.*.create_identity (it does not): with Unkey's root key (api rights only) Keygate answers 403 INSUFFICIENT_PERMISSIONS and writes nothing; with the identity right added, Unkey's outcome"
/** The identity rights Keygate asks of a root key that binds keys to identities (IDENTITY_RIGHTS). */
const WITH_IDENTITY = ['identity.*.read_identity', 'identity.*.create_identity']
/** Validation messages are Keygate's own (`field: what is wrong`); status and code are Unkey's. */
const VALIDATION_MESSAGE =
  "message in Keygate's words (`field: what is wrong`); status 400 and code BAD_REQUEST as Unkey's"

interface Route {
  /**
   * The request, made fresh for each case (it may create what it acts on: `subject` names it, for the rows that
   * grant an action on that one thing).
   */
  request(h: Harness): Promise<{ method: 'GET' | 'POST'; path: string; body?: unknown; subject?: string }>
}
/** A row of root-key permissions: of the harness's api, or of the request's subject. */
type Roles = (apiId: string, subject: string) => string[]

function security(
  short: string,
  route: Route,
  correct: {
    group: string
    rows: [string, Roles][]
    status?: number
    /** When the "correct" rows get another answer from Keygate: the verdict, its reason and the answer. */
    otherwise?: { verdict: 'deviation' | 'bug'; reason: string; status: number; code: string }
  },
  /** When Keygate refuses the request itself before it looks at the root key's permissions. */
  refused?: { reason: string; status: number; code: string },
) {
  /** Makes the request, then sends it with `rootKey`, or with a root key holding `roles`. */
  const send = async (h: Harness, rootKey: string | null | Roles) => {
    const request = await route.request(h)
    const key = typeof rootKey === 'function' ? await h.rootKey(rootKey(h.apiId, request.subject ?? '')) : rootKey
    return request.method === 'GET' ? h.get(request.path, key) : h.post(request.path, request.body, key)
  }
  deviation(short, 'shared permissions tests > without a key', MESSAGE_KEY_REQUIRED, async (h) => {
    expectError(await send(h, null), 403, 'UNAUTHORIZED', /^authorization: send a root key/)
  })
  same(short, 'shared permissions tests > with wrong key', async (h) => {
    expectError(await send(h, 'INVALID_KEY'), 403, 'UNAUTHORIZED')
  })
  const without: [string, Roles][] = [
    ['no roles', () => []],
    ['wrong roles', () => [randomUUID(), randomUUID()]],
    [
      'full access to wrong api',
      () =>
        ['read_api', 'update_api', 'delete_api', 'read_key', 'update_key', 'delete_key', 'create_key'].map(
          (action) => `api.${newId('api')}.${action}`,
        ),
    ],
  ]
  for (const [name, roles] of without) {
    const title = `shared permissions tests > without permission > ${name} > should reject`
    if (refused) {
      deviation(short, title, refused.reason, async (h) => {
        expectError(await send(h, roles), refused.status, refused.code)
      })
      continue
    }
    same(short, title, async (h) => {
      expectError(await send(h, roles), 403, 'INSUFFICIENT_PERMISSIONS')
    })
  }
  for (const [name, roles] of correct.rows) {
    const status = correct.status ?? 200
    const title = `${correct.group} > ${name} > returns ${status}`
    const otherwise = correct.otherwise ?? refused
    if (correct.otherwise?.verdict === 'bug') {
      bug(short, title, correct.otherwise.reason, async (h) => {
        expectOk(await send(h, roles), status)
      })
    } else if (otherwise) {
      deviation(short, title, otherwise.reason, async (h) => {
        expectError(await send(h, roles), otherwise.status, otherwise.code)
      })
    } else {
      same(short, title, async (h) => {
        expectOk(await send(h, roles), status)
      })
    }
  }
}

const LEGACY: [string, (apiId: string) => string[]][] = [
  ['legacy', () => ['*']],
  ['legacy and more', () => ['*', randomUUID()]],
]
/** The rows most files share: `*`, then an action on every api (`wildcard`), then on the api itself. */
function rowsFor(actions: string[], names = { wildcard: 'wildcard', specific: true }) {
  const rows: [string, (apiId: string) => string[]][] = [
    ...LEGACY,
    [names.wildcard, () => actions.map((action) => `api.*.${action}`)],
    [
      `${names.wildcard === 'wildcard' ? 'wildcard' : 'wildcard'} and more`,
      () => [...actions.map((a) => `api.*.${a}`), randomUUID()],
    ],
  ]
  if (names.specific) {
    rows.push(['specific apiId', (apiId) => actions.map((action) => `api.${apiId}.${action}`)])
    rows.push([
      'specific apiId and more',
      (apiId) => [...actions.map((action) => `api.${apiId}.${action}`), randomUUID()],
    ])
  }
  return rows
}
/** listKeys, getKey and whoami: read_key and read_api, mixed every way. */
const READ_ROWS: [string, (apiId: string) => string[]][] = [
  ...LEGACY,
  ['wildcard api', () => ['api.*.read_key', 'api.*.read_api']],
  ['wildcard mixed', (apiId) => ['api.*.read_key', `api.${apiId}.read_api`]],
  ['wildcard mixed 2', (apiId) => ['api.*.read_api', `api.${apiId}.read_key`]],
  ['wildcard and more', () => ['api.*.read_key', 'api.*.read_api', randomUUID()]],
  ['specific apiId', (apiId) => [`api.${apiId}.read_key`, `api.${apiId}.read_api`]],
  ['specific apiId and more', (apiId) => [`api.${apiId}.read_key`, `api.${apiId}.read_api`, randomUUID()]],
]

const rbacRows = (action: string): [string, (apiId: string) => string[]][] => [
  ...LEGACY,
  ['wildcard', () => [`rbac.*.${action}`]],
  ['wildcard and more', () => [`rbac.*.${action}`, randomUUID()]],
]

// ---------------------------------------------------------------------------------------------------------------
// apis.*

security(
  'apis_createApi.security',
  { request: async () => ({ method: 'POST', path: 'apis.createApi', body: { name: randomUUID() } }) },
  { group: 'correct roles', rows: rowsFor(['create_api'], { wildcard: 'wildcard', specific: false }) },
)
for (const [name, apiName] of [
  ['empty name', ''],
  ['short name', 'ab'],
]) {
  // Unkey's message: `name: String must contain at least 3 character(s)`.
  deviation('apis_createApi.error', `${name} > reject`, VALIDATION_MESSAGE, async (h) => {
    expectError(await h.post('apis.createApi', { name: apiName }), 400, 'BAD_REQUEST', /^name: /)
  })
}
same('apis_createApi.happy', 'creates new api', async (h) => {
  const created = await h.post('apis.createApi', { name: randomUUID() })
  expectOk(created)
  expectOk(await h.get(`apis.getApi?apiId=${created.body.apiId}`))
})

const newApi = async (h: Harness) => (await h.post('apis.createApi', { name: randomUUID() })).body.apiId as string

security(
  'apis_deleteApi.security',
  { request: async (h) => ({ method: 'POST', path: 'apis.deleteApi', body: { apiId: h.apiId } }) },
  { group: 'correct roles', rows: rowsFor(['delete_api']) },
)
same('apis_deleteApi.error', 'api does not exist', async (h) => {
  const apiId = newId('api')
  expectError(await h.post('apis.deleteApi', { apiId }), 404, 'NOT_FOUND', `api ${apiId} not found`)
})
same('apis_deleteApi.happy', 'without delete protection > soft deletes the api', async (h) => {
  const apiId = await newApi(h)
  const deleted = await h.post('apis.deleteApi', { apiId })
  expectOk(deleted)
  expect(deleted.body).toEqual({})
  expectError(await h.get(`apis.getApi?apiId=${apiId}`), 404, 'NOT_FOUND')
})
na(
  'apis_deleteApi.happy',
  'with delete protection > returns an error',
  'delete protection is set in the database (no v1 call sets it); Keygate has no delete protection',
)

security(
  'apis_deleteKeys.security',
  { request: async (h) => ({ method: 'POST', path: 'apis.deleteKeys', body: { apiId: h.apiId } }) },
  { group: 'correct permissions', rows: rowsFor(['delete_key']) },
)
same('apis_deleteKeys.error', 'api does not exist', async (h) => {
  // Unkey's test posts to apis.deleteApi here, not deleteKeys.
  const apiId = newId('api')
  expectError(await h.post('apis.deleteApi', { apiId }), 404, 'NOT_FOUND', `api ${apiId} not found`)
})
deviation(
  'apis_deleteKeys.happy',
  'deletes the keys',
  'deleted keys are always removed (`permanent` is accepted): a later permanent delete counts only the keys made since (1, not 11)',
  async (h) => {
    for (let i = 0; i < 10; i++) await h.createKey()
    const soft = await h.post('apis.deleteKeys', { apiId: h.apiId, permanent: false })
    expectOk(soft)
    expect(soft.body.deletedKeys).toBe(10)
    await h.createKey()
    const hard = await h.post('apis.deleteKeys', { apiId: h.apiId, permanent: true })
    expectOk(hard)
    expect(hard.body.deletedKeys).toBe(1)
    expect((await h.get(`apis.listKeys?apiId=${h.apiId}`)).body.keys).toEqual([])
  },
)

security(
  'apis_getApi.security',
  { request: async (h) => ({ method: 'GET', path: `apis.getApi?apiId=${h.apiId}` }) },
  { group: 'correct roles', rows: rowsFor(['read_api']) },
)
same('apis_getApi.error', 'api does not exist', async (h) => {
  const apiId = newId('api')
  expectError(await h.get(`apis.getApi?apiId=${apiId}`), 404, 'NOT_FOUND', `api ${apiId} not found`)
})
same('apis_getApi.happy', 'return the api', async (h) => {
  const answer = await h.get(`apis.getApi?apiId=${h.apiId}`)
  expectOk(answer)
  expect(answer.body).toEqual({ id: h.apiId, name: expect.any(String), workspaceId: expect.any(String) })
})
same('apis_getApi.happy', 'with ip whitelist', async (h) => {
  // Unkey's test writes the whitelist to its database; Keygate's createApi takes it (ipWhitelist is Keygate's).
  const created = await h.post('apis.createApi', { name: 'with ip whitelist', ipWhitelist: ['127.0.0.1'] })
  expectOk(created)
  const rootKey = await h.rootKey(['api.*.read_api'])
  const answer = await h.get(`apis.getApi?apiId=${created.body.apiId}`, rootKey)
  expectOk(answer)
  expect(answer.body).toEqual({ id: created.body.apiId, name: 'with ip whitelist', workspaceId: expect.any(String) })
})

security(
  'apis_listKeys.security',
  { request: async (h) => ({ method: 'GET', path: `apis.listKeys?apiId=${h.apiId}` }) },
  { group: 'correct roles', rows: READ_ROWS },
)
same('apis_listKeys.error', 'when the api does not exist', async (h) => {
  const apiId = newId('api')
  const rootKey = await h.rootKey([`api.${apiId}.read_api`, `api.${apiId}.read_key`])
  expectError(await h.get(`apis.listKeys?apiId=${apiId}`, rootKey), 404, 'NOT_FOUND', `api ${apiId} not found`)
})
na(
  'apis_listKeys.error',
  'when the api has no keyAuth',
  'an api without keyAuth exists only in the database: every Keygate api holds keys',
)
const listed = async (h: Harness, query = '') => {
  const rootKey = await h.rootKey([`api.${h.apiId}.read_api`, `api.${h.apiId}.read_key`])
  const answer = await h.get(`apis.listKeys?apiId=${h.apiId}${query}`, rootKey)
  expectOk(answer)
  return answer.body
}
same('apis_listKeys.happy', 'get api', async (h) => {
  for (let i = 0; i < 10; i++) await h.createKey()
  const body = await listed(h)
  expect(body.total).toBeGreaterThanOrEqual(10)
  expect(body.keys.length).toBeGreaterThanOrEqual(10)
  expect(body.keys.length).toBeLessThanOrEqual(100)
})
same('apis_listKeys.happy', 'returns enabled', async (h) => {
  const made = new Map<string, boolean>()
  for (let i = 0; i < 10; i++) {
    const enabled = i % 3 !== 0
    made.set((await h.createKey({ enabled })).keyId, enabled)
  }
  const body = await listed(h)
  expect(body.total).toBeGreaterThanOrEqual(10)
  for (const key of body.keys) expect(key.enabled).toBe(made.get(key.id))
})
same('apis_listKeys.happy', 'returns identity', async (h) => {
  const identity = await newIdentity(h)
  for (let i = 0; i < 10; i++) await h.createKey({ externalId: identity.externalId })
  const body = await listed(h)
  expect(body.total).toBeGreaterThanOrEqual(10)
  expect(body.keys.length).toBeGreaterThanOrEqual(10)
  expect(body.keys.length).toBeLessThanOrEqual(100)
  for (const key of body.keys) expect(key.identity).toMatchObject({ id: identity.id, externalId: identity.externalId })
})
same('apis_listKeys.happy', 'filter by ownerId', async (h) => {
  const ownerId = randomUUID()
  for (let i = 0; i < 10; i++) await h.createKey(i % 2 === 0 ? { ownerId } : {})
  const body = await listed(h, `&ownerId=${ownerId}`)
  expect(body.total).toBeGreaterThanOrEqual(10)
  expect(body.keys).toHaveLength(5)
})
same('apis_listKeys.happy', 'filter by externalId', async (h) => {
  const externalId = randomUUID()
  for (let i = 0; i < 10; i++) await h.createKey(i % 2 === 0 ? { externalId } : {})
  const body = await listed(h, `&externalId=${externalId}`)
  expect(body.total).toBeGreaterThanOrEqual(10)
  expect(body.keys).toHaveLength(5)
})
same('apis_listKeys.happy', 'returns roles and permissions', async (h) => {
  // Unkey's test attaches a role granting a permission in the database; here through the API.
  const roleName = randomUUID()
  const permissionName = randomUUID()
  const permission = await h.post('permissions.createPermission', { name: permissionName })
  expectOk(permission)
  const role = await h.post('permissions.createRole', { name: roleName })
  expectOk(role)
  expectOk(
    await h.post('permissions.setRolePermissions', {
      roleId: role.body.roleId,
      permissions: [{ id: permission.body.permissionId }],
    }),
  )
  const { keyId } = await h.createKey()
  expectOk(await h.post('keys.addRoles', { keyId, roles: [{ id: role.body.roleId }] }))
  const body = await listed(h)
  expect(body.keys).toHaveLength(1)
  expect(body.keys[0].roles).toEqual([roleName])
  expect(body.keys[0].permissions).toEqual([permissionName])
})
same('apis_listKeys.happy', 'with limit', async (h) => {
  for (let i = 0; i < 10; i++) await h.createKey()
  const body = await listed(h, '&limit=2')
  expect(body.total).toBeGreaterThanOrEqual(10)
  expect(body.keys).toHaveLength(2)
})
same('apis_listKeys.happy', 'with cursor', async (h) => {
  for (let i = 0; i < 10; i++) await h.createKey()
  const first = await listed(h, '&limit=2')
  expect(first.cursor).toBeDefined()
  const second = await listed(h, `&limit=3&cursor=${first.cursor}`)
  expect(new Set([...first.keys, ...second.keys].map((key: { id: string }) => key.id)).size).toBe(5)
})
na('apis_listKeys.happy', 'retrieves a key in plain text', 'Keygate stores no key it could decrypt (hashes only)')

// ---------------------------------------------------------------------------------------------------------------
// keys.createKey

/** Names unique to one case: each Unkey test has a workspace of its own, Keygate has one for all the cases. */
const unique = (name: string) => `${name}-${randomUUID().slice(0, 8)}`
/** The key verifies and is the key createKey said it made (Unkey's tests compare the stored hash). */
async function expectStored(h: Harness, created: { keyId: string; key: string }) {
  const verified = await h.verify({ key: created.key, apiId: h.apiId })
  expect(verified.body).toMatchObject({ keyId: created.keyId })
}
const createAs = async (h: Harness, body: object, permissions = [`api.${h.apiId}.create_key`]) =>
  h.post('keys.createKey', { apiId: h.apiId, ...body }, await h.rootKey(permissions))

security(
  'keys_createKey.security',
  { request: async (h) => ({ method: 'POST', path: 'keys.createKey', body: { apiId: h.apiId, byteLength: 16 } }) },
  { group: 'correct roles', rows: rowsFor(['create_key'], { wildcard: 'wildcard api', specific: true }) },
)
na('keys_createKey.security', 'cannot encrypt without permissions', 'Keygate stores no recoverable (encrypted) keys')
same('keys_createKey.security', 'cannot create role without permissions', async (h) => {
  expectError(await createAs(h, { roles: [unique('r1')] }), 403, 'INSUFFICIENT_PERMISSIONS')
})
same('keys_createKey.security', 'cannot create permission without permissions', async (h) => {
  expectError(await createAs(h, { permissions: [unique('p1')] }), 403, 'INSUFFICIENT_PERMISSIONS')
})
same('keys_createKey.error', 'when the api does not exist', async (h) => {
  const apiId = newId('api')
  const answer = await h.post('keys.createKey', { apiId, byteLength: 16 }, await h.rootKey([`api.${apiId}.create_key`]))
  expectError(answer, 404, 'NOT_FOUND', `api ${apiId} not found`)
})
na('keys_createKey.error', 'when the api has no keyAuth', 'an api without keyAuth exists only in the database')
same('keys_createKey.error', 'reject invalid ratelimit config', async (h) => {
  const answer = await h.post('keys.createKey', { apiId: h.apiId, byteLength: 16, ratelimit: { type: 'x' } })
  expect(answer.status).toBe(400)
  expect(answer.body.error.code).toBe('BAD_REQUEST')
})
na('keys_createKey.error', 'when key recovery is not enabled', 'Keygate stores no recoverable (encrypted) keys')
deviation(
  'keys_createKey.error',
  'reject invalid refill config when daily interval has non-null refillDay',
  VALIDATION_MESSAGE,
  async (h) => {
    const refill = { amount: 100, refillDay: 4, interval: 'daily' }
    const answer = await createAs(h, { byteLength: 16, remaining: 10, refill })
    expectError(answer, 400, 'BAD_REQUEST', /^refill\.refillDay: only for a monthly/)
  },
)
same('keys_createKey.happy', 'creates key', async (h) => {
  const answer = await createAs(h, { byteLength: 18, enabled: true })
  expectOk(answer)
  await expectStored(h, answer.body)
})
na(
  'keys_createKey.happy',
  'creates key with default prefix and bytes from keyAuth',
  "an api's default prefix and length are set in the database (no v1 call sets them)",
)
for (const [group, enabled, title, expected] of [
  ['not set', undefined, 'should still create an enabled key', true],
  ['enabled: false', false, 'should create a disabled key', false],
  ['enabled: true', true, 'should create an enabled key', true],
] as const) {
  same('keys_createKey.happy', `with enabled flag > ${group} > ${title}`, async (h) => {
    const answer = await createAs(h, { byteLength: 16, ...(enabled === undefined ? {} : { enabled }) })
    expectOk(answer)
    expect((await h.get(`keys.getKey?keyId=${answer.body.keyId}`)).body.enabled).toBe(expected)
    if (expected) await expectStored(h, answer.body)
  })
}
same('keys_createKey.happy', 'with prefix > start includes prefix', async (h) => {
  const answer = await createAs(h, { byteLength: 16, prefix: 'prefix', enabled: true })
  expectOk(answer)
  expect((await h.get(`keys.getKey?keyId=${answer.body.keyId}`)).body.start.startsWith('prefix_')).toBe(true)
})
const rolesOf = async (h: Harness, keyId: string) => (await h.get(`keys.getKey?keyId=${keyId}`)).body.roles as string[]
const permissionsOf = async (h: Harness, keyId: string) =>
  (await h.get(`keys.getKey?keyId=${keyId}`)).body.permissions as string[]
same('keys_createKey.happy', 'roles > connects the specified roles', async (h) => {
  const roles = [unique('r1'), unique('r2')]
  for (const name of roles) expectOk(await h.post('permissions.createRole', { name }))
  const answer = await createAs(h, { roles })
  expectOk(answer)
  expect((await rolesOf(h, answer.body.keyId)).sort()).toEqual(roles.sort())
})
same('keys_createKey.happy', 'roles > upserts the specified roles', async (h) => {
  const roles = [unique('r1'), unique('r2')]
  const answer = await createAs(h, { roles }, [`api.${h.apiId}.create_key`, 'rbac.*.create_role'])
  expectOk(answer)
  expect((await rolesOf(h, answer.body.keyId)).sort()).toEqual(roles.sort())
})
same('keys_createKey.happy', 'permissions > connects the specified permissions', async (h) => {
  const permissions = [unique('p1'), unique('p2')]
  for (const name of permissions) expectOk(await h.post('permissions.createPermission', { name }))
  const answer = await createAs(h, { permissions })
  expectOk(answer)
  expect((await permissionsOf(h, answer.body.keyId)).sort()).toEqual(permissions.sort())
})
same('keys_createKey.happy', 'upserts the specified permissions', async (h) => {
  const permissions = [unique('p1'), unique('p2')]
  const rootPermissions = [`api.${h.apiId}.create_key`, 'rbac.*.create_permission']
  for (let i = 0; i < 2; i++) {
    const answer = await createAs(h, { permissions }, rootPermissions)
    expectOk(answer)
    expect((await permissionsOf(h, answer.body.keyId)).sort()).toEqual(permissions.sort())
  }
})
na('keys_createKey.happy', 'with encryption > encrypts a key', 'Keygate stores no recoverable (encrypted) keys')
same('keys_createKey.happy', 'creates a key with environment', async (h) => {
  const answer = await createAs(h, { environment: 'test' })
  expectOk(answer)
  expect((await h.get(`keys.getKey?keyId=${answer.body.keyId}`)).body.environment).toBe('test')
})
// A key's identity, read back through getKey; the identity's keys have no v1 call, so the key names the identity.
for (const [group, field] of [
  ['with ownerId > when ownerId does not exist yet', 'ownerId'],
  ['with externalId > when externalId does not exist yet', 'externalId'],
] as const) {
  deviation('keys_createKey.happy', `${group} > should create identity`, IDENTITY_RIGHTS, async (h) => {
    const externalId = randomUUID()
    expectError(await createAs(h, { [field]: externalId }), 403, 'INSUFFICIENT_PERMISSIONS')
    expectError(await h.get(`identities.getIdentity?externalId=${externalId}`), 404, 'NOT_FOUND')
    const answer = await createAs(h, { [field]: externalId }, [`api.${h.apiId}.create_key`, ...WITH_IDENTITY])
    expectOk(answer)
    const identity = await h.get(`identities.getIdentity?externalId=${externalId}`)
    expectOk(identity)
    expect((await h.get(`keys.getKey?keyId=${answer.body.keyId}`)).body.identity.id).toBe(identity.body.id)
  })
}
for (const group of ['with ownerId', 'with externalId']) {
  // Both of Unkey's tests send ownerId.
  deviation(
    'keys_createKey.happy',
    `${group} > when the identity exists already > should link to the identity`,
    IDENTITY_RIGHTS,
    async (h) => {
      const identity = await newIdentity(h)
      expectError(await createAs(h, { ownerId: identity.externalId }), 403, 'INSUFFICIENT_PERMISSIONS')
      const answer = await createAs(h, { ownerId: identity.externalId }, [
        `api.${h.apiId}.create_key`,
        'identity.*.read_identity',
      ])
      expectOk(answer)
      expect((await h.get(`keys.getKey?keyId=${answer.body.keyId}`)).body.identity.id).toBe(identity.id)
    },
  )
}
same(
  'keys_createKey.happy',
  'with externalId > Should default first day of month if none provided > should provide default value',
  async (h) => {
    const answer = await createAs(h, { remaining: 10, refill: { interval: 'monthly', amount: 20 } })
    expectOk(answer)
    expect((await h.get(`keys.getKey?keyId=${answer.body.keyId}`)).body.refill.refillDay).toBe(1)
  },
)

// ---------------------------------------------------------------------------------------------------------------
// Security of the other routes (their happy and error tests follow, operation by operation).

const keyRoute = (
  method: 'GET' | 'POST',
  path: (keyId: string) => string,
  body?: (keyId: string) => object,
): Route => ({
  async request(h) {
    const { keyId } = await h.createKey()
    return { method, path: path(keyId), ...(body ? { body: body(keyId) } : {}) }
  },
})
security(
  'keys_getKey.security',
  keyRoute('GET', (keyId) => `keys.getKey?keyId=${keyId}`),
  {
    group: 'correct roles',
    rows: READ_ROWS,
  },
)
security(
  'keys_deleteKey.security',
  keyRoute(
    'POST',
    () => 'keys.deleteKey',
    (keyId) => ({ keyId }),
  ),
  {
    group: 'correct roles',
    rows: [],
  },
)
security(
  'keys_updateKey.security',
  keyRoute(
    'POST',
    () => 'keys.updateKey',
    (keyId) => ({ keyId, enabled: false }),
  ),
  { group: 'correct roles', rows: rowsFor(['update_key'], { wildcard: 'wildcard api', specific: true }) },
)
security(
  'keys_updateRemaining.security',
  keyRoute(
    'POST',
    () => 'keys.updateRemaining',
    (keyId) => ({ keyId, op: 'set', value: 10 }),
  ),
  { group: 'correct roles', rows: rowsFor(['update_key'], { wildcard: 'wildcard api', specific: true }) },
)
security(
  'keys_whoami.security',
  {
    async request(h) {
      const { key } = await h.createKey()
      return { method: 'POST', path: 'keys.whoami', body: { key } }
    },
  },
  { group: 'correct permissions', rows: READ_ROWS },
)
security(
  'keys_getVerifications.security',
  keyRoute('GET', (keyId) => `keys.getVerifications?keyId=${keyId}`),
  {
    group: 'correct roles',
    rows: [
      ...LEGACY,
      ['wildcard api', () => ['api.*.read_key']],
      ['wildcard and more', () => ['api.*.read_key', 'api.*.read_api', randomUUID()]],
      ['specific apiId', (apiId) => [`api.${apiId}.read_key`]],
      ['specific apiId and more', (apiId) => [`api.${apiId}.read_key`, randomUUID()]],
    ],
  },
)
na('keys_getVerifications.security', 'cannot read keys from a different workspace', 'Keygate has one workspace')
for (const [operation, field] of [
  ['addPermissions', 'permissions'],
  ['setPermissions', 'permissions'],
  ['removePermissions', 'permissions'],
  ['addRoles', 'roles'],
  ['setRoles', 'roles'],
  ['removeRoles', 'roles'],
] as const) {
  const create = !operation.startsWith('remove')
  security(
    `keys_${operation}.security`,
    keyRoute(
      'POST',
      () => `keys.${operation}`,
      (keyId) => ({
        keyId,
        [field]: [{ name: unique('hello'), ...(create ? { create: true } : {}) }],
      }),
    ),
    // Removing one the workspace does not have removes nothing: 200, as Unkey's.
    { group: 'correct permissions', rows: LEGACY },
  )
}
security(
  'migrations_createKey.security',
  {
    async request(h) {
      // Unkey's sends `hash` (and, for the "correct roles" rows, a UUID) as the hash value.
      const hash = { value: 'hash', variant: 'sha256_base64' }
      return { method: 'POST', path: 'migrations.createKeys', body: [{ start: 'start_', hash, apiId: h.apiId }] }
    },
  },
  {
    group: 'correct roles',
    rows: rowsFor(['create_key'], { wildcard: 'wildcard api', specific: true }),
    // A root key without the right learns that first (403, as Unkey's); one with it, that `hash` is no SHA-256.
    otherwise: { verdict: 'deviation', reason: MIGRATION_HASH, status: 400, code: 'BAD_REQUEST' },
  },
)
for (const name of [
  'root wildcard',
  'without permissions',
  'with specific permission',
  'with wildcard permission',
  'with mixed permission',
]) {
  na(
    'migrations_createKey.security',
    `encrypting requires permissions > ${name} > encrypting requires permissions`,
    'Keygate stores no recoverable (encrypted) keys',
  )
}
const named = (kind: 'Permission' | 'Role', action: string) => ({
  async request(h: Harness) {
    const created = await h.post(`permissions.create${kind}`, { name: unique(kind.toLowerCase()) })
    const id = created.body[`${kind.toLowerCase()}Id`] as string
    return action === 'get'
      ? { method: 'GET' as const, path: `permissions.get${kind}?${kind.toLowerCase()}Id=${id}` }
      : { method: 'POST' as const, path: `permissions.delete${kind}`, body: { [`${kind.toLowerCase()}Id`]: id } }
  },
})
security(
  'permissions_createPermission.security',
  { request: async () => ({ method: 'POST', path: 'permissions.createPermission', body: { name: randomUUID() } }) },
  { group: 'correct roles', rows: LEGACY },
)
security(
  'permissions_createRole.security',
  { request: async () => ({ method: 'POST', path: 'permissions.createRole', body: { name: randomUUID() } }) },
  { group: 'correct roles', rows: LEGACY },
)
security('permissions_deletePermission.security', named('Permission', 'delete'), {
  group: 'correct roles',
  rows: LEGACY,
})
security('permissions_deleteRole.security', named('Role', 'delete'), { group: 'correct roles', rows: LEGACY })
security('permissions_getPermission.security', named('Permission', 'get'), {
  group: 'correct permissions',
  rows: rbacRows('read_permission'),
})
security('permissions_getRole.security', named('Role', 'get'), { group: 'correct roles', rows: rbacRows('read_role') })
security(
  'permissions_listPermissions.security',
  { request: async () => ({ method: 'GET', path: 'permissions.listPermissions' }) },
  { group: 'correct permissions', rows: rbacRows('read_permission') },
)
security(
  'permissions_listRoles.security',
  { request: async () => ({ method: 'GET', path: 'permissions.listRoles' }) },
  { group: 'correct roles', rows: rbacRows('read_role') },
)

// ---------------------------------------------------------------------------------------------------------------
// keys.add/set/removePermissions, keys.add/set/removeRoles

type Kind = 'permissions' | 'roles'
const singular = (kind: Kind) => (kind === 'permissions' ? 'permission' : 'role')
/** A permission or role made through the API: its id and name. */
async function record(h: Harness, kind: Kind) {
  const name = randomUUID()
  const made = await h.post(kind === 'permissions' ? 'permissions.createPermission' : 'permissions.createRole', {
    name,
  })
  expectOk(made)
  return { id: made.body[`${singular(kind)}Id`] as string, name }
}
const heldBy = async (h: Harness, keyId: string, kind: Kind) =>
  ((await h.get(`keys.getKey?keyId=${keyId}`)).body[kind] ?? []) as string[]
const attach = async (h: Harness, keyId: string, kind: Kind, id: string) =>
  expectOk(await h.post(kind === 'permissions' ? 'keys.addPermissions' : 'keys.addRoles', { keyId, [kind]: [{ id }] }))

/**
 * Changing what a key is granted is changing the key: Keygate asks update_key on the key's api beside Unkey's rbac
 * actions (as v2 does), so that a root key with no right on an api cannot change its keys' grants.
 */
const KEY_API_RIGHT =
  "Keygate asks api.<the key's api>.update_key beside Unkey's rbac actions (Unkey v2 does; Unkey v1 asked none): with Unkey's root key Keygate answers 403 INSUFFICIENT_PERMISSIONS and changes nothing; with update_key added, Unkey's outcome"
/**
 * Sends `body` to `path` with a root key holding `permissions` (Unkey's test's) and sees it refused, the key's grants
 * unchanged (KEY_API_RIGHT); answers the same request with update_key on every api added.
 */
async function withKeyApiRight(h: Harness, path: string, body: { keyId: string }, kind: Kind, permissions: string[]) {
  const held = await heldBy(h, body.keyId, kind)
  const refused = await h.post(path, body, await h.rootKey(permissions))
  expectError(refused, 403, 'INSUFFICIENT_PERMISSIONS', "the root key needs api.<the key's api>.update_key")
  expect(await heldBy(h, body.keyId, kind)).toEqual(held)
  return h.post(path, body, await h.rootKey([...permissions, 'api.*.update_key']))
}

for (const kind of ['permissions', 'roles'] as const) {
  const Kind = kind === 'permissions' ? 'Permissions' : 'Roles'
  const add = `rbac.*.add_${singular(kind)}_to_key`
  const remove = `rbac.*.remove_${singular(kind)}_from_key`
  for (const verb of ['add', 'set', 'remove']) {
    const short = `keys_${verb}${Kind}.error`
    const path = `keys.${verb}${Kind}`
    deviation(short, 'empty keyId', VALIDATION_MESSAGE, async (h) => {
      const answer = await h.post(path, { keyId: '', [kind]: [{ id: 'perm_123' }] })
      expectError(answer, 400, 'BAD_REQUEST', /^keyId: /)
    })
    deviation(short, `empty ${kind}`, VALIDATION_MESSAGE, async (h) => {
      expectError(await h.post(path, { keyId: 'key_123', [kind]: [] }), 400, 'BAD_REQUEST', new RegExp(`^${kind}: `))
    })
  }
  // add and set: made on the fly with create, or connected by id.
  for (const verb of ['add', 'set']) {
    const short = `keys_${verb}${Kind}.happy`
    const path = `keys.${verb}${Kind}`
    // What Unkey's tests hold: create_permission and add, but create_role to make roles with setRoles.
    const rootFor = (creating = false) => [
      `rbac.*.create_${creating && verb === 'set' && kind === 'roles' ? 'role' : 'permission'}`,
      add,
    ]
    if (kind === 'roles' && verb === 'add') {
      deviation(
        short,
        'creates all missing permissions',
        "creating a role needs rbac.*.create_role: Unkey's test holds create_permission and add_role_to_key, and gets 403 INSUFFICIENT_PERMISSIONS here",
        async (h) => {
          const { keyId } = await h.createKey()
          const answer = await h.post(
            path,
            { keyId, roles: [{ name: randomUUID(), create: true }] },
            await h.rootKey(rootFor()),
          )
          expectError(answer, 403, 'INSUFFICIENT_PERMISSIONS')
        },
      )
    } else {
      deviation(short, `creates all missing ${kind}`, KEY_API_RIGHT, async (h) => {
        const { keyId } = await h.createKey()
        const name = randomUUID()
        expectOk(await withKeyApiRight(h, path, { keyId, [kind]: [{ name, create: true }] }, kind, rootFor(true)))
        expect(await heldBy(h, keyId, kind)).toContain(name)
      })
    }
    deviation(short, `connects all ${kind}`, KEY_API_RIGHT, async (h) => {
      const made = [await record(h, kind), await record(h, kind), await record(h, kind)]
      const { keyId } = await h.createKey()
      const answer = await withKeyApiRight(h, path, { keyId, [kind]: made.map(({ id }) => ({ id })) }, kind, rootFor())
      expectOk(answer)
      expect((await heldBy(h, keyId, kind)).sort()).toEqual(made.map(({ name }) => name).sort())
    })
  }
  deviation(
    `keys_set${Kind}.happy`,
    kind === 'roles' ? 'not desired roles are disconnected' : 'not desired permissions are removed',
    KEY_API_RIGHT,
    async (h) => {
      const made = [await record(h, kind), await record(h, kind), await record(h, kind)]
      const { keyId } = await h.createKey()
      await attach(h, keyId, kind, made[0]!.id)
      const root = [`rbac.*.create_${singular(kind)}`, remove, add]
      const body = { keyId, [kind]: made.slice(1).map(({ id }) => ({ id })) }
      expectOk(await withKeyApiRight(h, `keys.set${Kind}`, body, kind, root))
      expect((await heldBy(h, keyId, kind)).sort()).toEqual(
        made
          .slice(1)
          .map(({ name }) => name)
          .sort(),
      )
    },
  )
  // Setting a list that holds what the key has takes nothing away: add is all it needs, as in Unkey's test.
  deviation(
    `keys_set${Kind}.happy`,
    `additional ${kind} does not remove existing ${kind}`,
    KEY_API_RIGHT,
    async (h) => {
      const made = [await record(h, kind), await record(h, kind), await record(h, kind)]
      const { keyId } = await h.createKey()
      await attach(h, keyId, kind, made[0]!.id)
      const body = { keyId, [kind]: made.map(({ id }) => ({ id })) }
      const answer = await withKeyApiRight(h, `keys.set${Kind}`, body, kind, ['rbac.*.create_permission', add])
      expectOk(answer)
      expect((await heldBy(h, keyId, kind)).sort()).toEqual(made.map(({ name }) => name).sort())
    },
  )
  for (const by of ['name', 'id'] as const) {
    deviation(`keys_remove${Kind}.happy`, `removes ${singular(kind)} by ${by}`, KEY_API_RIGHT, async (h) => {
      const made = await record(h, kind)
      const { keyId } = await h.createKey()
      await attach(h, keyId, kind, made.id)
      const answer = await withKeyApiRight(h, `keys.remove${Kind}`, { keyId, [kind]: [{ [by]: made[by] }] }, kind, [
        remove,
      ])
      expectOk(answer)
      expect(await heldBy(h, keyId, kind)).toEqual([])
    })
  }
}

// ---------------------------------------------------------------------------------------------------------------
// keys.getKey, keys.deleteKey, keys.whoami, keys.updateRemaining

same('keys_getKey.error', 'when the key does not exist', async (h) => {
  const keyId = newId('key')
  const answer = await h.get(`keys.getKey?keyId=${keyId}`, await h.rootKey([`api.${newId('api')}.read_key`]))
  expectError(answer, 404, 'NOT_FOUND', `key ${keyId} not found`)
})
same('keys_getKey.happy', 'returns 200', async (h) => {
  const created = await h.post('keys.createKey', { apiId: h.apiId, name: 'test', prefix: 'test' })
  expectOk(created)
  const answer = await h.get(`keys.getKey?keyId=${created.body.keyId}`, await h.rootKey(['api.*.read_key']))
  expectOk(answer)
  expect(answer.body).toMatchObject({
    id: created.body.keyId,
    apiId: h.apiId,
    workspaceId: expect.any(String),
    name: 'test',
    start: created.body.key.slice(0, answer.body.start.length),
    createdAt: clock.now(),
  })
})
same('keys_getKey.happy', 'returns identity', async (h) => {
  const identity = await newIdentity(h)
  const { keyId } = await h.createKey({ externalId: identity.externalId })
  const rootKey = await h.rootKey([`api.${h.apiId}.read_api`, `api.${h.apiId}.read_key`])
  const answer = await h.get(`keys.getKey?keyId=${keyId}`, rootKey)
  expectOk(answer)
  expect(answer.body.identity).toMatchObject({ id: identity.id, externalId: identity.externalId })
})
same('keys_deleteKey.error', 'api not found', async (h) => {
  // Unkey's test calls apis.listKeys here.
  const apiId = newId('api')
  const rootKey = await h.rootKey([`api.${apiId}.read_api`, `api.${apiId}.read_key`])
  expectError(await h.get(`apis.listKeys?apiId=${apiId}`, rootKey), 404, 'NOT_FOUND', `api ${apiId} not found`)
})
deviation(
  'keys_deleteKey.happy',
  'soft deletes key',
  "a deleted key is always removed (no soft-deleted row to read back, as Unkey's test does): the key is gone from getKey and verifyKey",
  async (h) => {
    const { keyId, key } = await h.createKey()
    expectOk(await h.post('keys.deleteKey', { keyId }, await h.rootKey([`api.${h.apiId}.delete_key`])))
    expectError(await h.get(`keys.getKey?keyId=${keyId}`), 404, 'NOT_FOUND')
    expect((await h.verify({ key })).body).toMatchObject({ valid: false, code: 'NOT_FOUND' })
  },
)
same('keys_deleteKey.happy', 'hard deletes key', async (h) => {
  const { keyId } = await h.createKey()
  const answer = await h.post(
    'keys.deleteKey',
    { keyId, permanent: true },
    await h.rootKey([`api.${h.apiId}.delete_key`]),
  )
  expectOk(answer)
  expectError(await h.get(`keys.getKey?keyId=${keyId}`), 404, 'NOT_FOUND')
})
deviation(
  'keys_whoami.error',
  'when the key does not exist',
  "message `no key matches` where Unkey's says `Key not found`; status 404 and code NOT_FOUND as Unkey's",
  async (h) => {
    const rootKey = await h.rootKey([`api.${newId('api')}.read_key`])
    const answer = await h.post('keys.whoami', { key: `test_${randomUUID()}` }, rootKey)
    expectError(answer, 404, 'NOT_FOUND', 'no key matches')
  },
)
same('keys_whoami.happy', 'returns 200', async (h) => {
  const meta = { hello: 'world' }
  const created = await h.createKey({ name: 'test', remaining: 100, enabled: true, environment: 'test', meta })
  const answer = await h.post('keys.whoami', { key: created.key }, await h.rootKey(['api.*.read_key']))
  expectOk(answer)
  expect(answer.body).toMatchObject({
    id: created.keyId,
    name: 'test',
    remaining: 100,
    meta,
    enabled: true,
    environment: 'test',
  })
})
same('keys_whoami.happy', 'returns identity', async (h) => {
  const identity = await newIdentity(h)
  const { key } = await h.createKey({ externalId: identity.externalId })
  const rootKey = await h.rootKey([`api.${h.apiId}.read_api`, `api.${h.apiId}.read_key`])
  const answer = await h.post('keys.whoami', { key }, rootKey)
  expectOk(answer)
  expect(answer.body.identity).toMatchObject({ id: identity.id, externalId: identity.externalId })
})
same('keys_updateRemaining.error', 'when the key does not exist', async (h) => {
  const keyId = newId('key')
  const answer = await h.post(
    'keys.updateRemaining',
    { keyId, op: 'set', value: 10 },
    await h.rootKey([`api.${h.apiId}.update_key`]),
  )
  expectError(answer, 404, 'NOT_FOUND', `key ${keyId} not found`)
})
for (const [op, expected] of [
  ['increment', 110],
  ['decrement', 90],
  ['set', 10],
] as const) {
  same('keys_updateRemaining.happy', op, async (h) => {
    const { keyId } = await h.createKey({ name: 'test', remaining: 100 })
    const answer = await h.post('keys.updateRemaining', { keyId, op, value: 10 }, await h.rootKey(['api.*.update_key']))
    expectOk(answer)
    expect(answer.body.remaining).toBe(expected)
  })
}
same('keys_updateRemaining.happy', 'invalid operation', async (h) => {
  const { keyId } = await h.createKey({ name: 'test', remaining: 100 })
  const answer = await h.post(
    'keys.updateRemaining',
    { keyId, op: 'XXX', value: 10 },
    await h.rootKey(['api.*.update_key']),
  )
  expect(answer.status).toBe(400)
})

// ---------------------------------------------------------------------------------------------------------------
// permissions.*

for (const kind of ['Permission', 'Role'] as const) {
  const lower = kind.toLowerCase() as 'permission' | 'role'
  for (const [name, value] of [
    ['empty name', ''],
    ['short name', 'ab'],
  ]) {
    // Unkey's message: `name: String must contain at least 3 character(s)`.
    deviation(`permissions_create${kind}.error`, `${name} > reject`, VALIDATION_MESSAGE, async (h) => {
      expectError(await h.post(`permissions.create${kind}`, { name: value }), 400, 'BAD_REQUEST', /^name: /)
    })
  }
  const twice =
    kind === 'Permission'
      ? 'creating the same permission twice returns conflict'
      : 'creating the same role twice errors'
  same(`permissions_create${kind}.error`, twice, async (h) => {
    const rootKey = await h.rootKey([`rbac.*.create_${lower}`])
    const name = randomUUID()
    expectOk(await h.post(`permissions.create${kind}`, { name }, rootKey))
    expectError(
      await h.post(`permissions.create${kind}`, { name }, rootKey),
      409,
      'CONFLICT',
      `${kind} with name "${name}" already exists in this workspace`,
    )
  })
  same(`permissions_create${kind}.happy`, `creates new ${lower}`, async (h) => {
    const created = await h.post(
      `permissions.create${kind}`,
      { name: randomUUID() },
      await h.rootKey([`rbac.*.create_${lower}`]),
    )
    expectOk(created)
    expectOk(await h.get(`permissions.get${kind}?${lower}Id=${created.body[`${lower}Id`]}`))
  })
  same(`permissions_get${kind}.error`, `${lower} does not exist`, async (h) => {
    const id = newId(kind === 'Permission' ? 'perm' : 'role')
    const answer = await h.get(`permissions.get${kind}?${lower}Id=${id}`, await h.rootKey(['*']))
    expectError(answer, 404, 'NOT_FOUND', `${lower} ${id} not found`)
  })
  same(`permissions_delete${kind}.happy`, `deletes ${lower}`, async (h) => {
    const id = (await record(h, kind === 'Permission' ? 'permissions' : 'roles')).id
    const answer = await h.post(
      `permissions.delete${kind}`,
      { [`${lower}Id`]: id },
      await h.rootKey([`rbac.*.delete_${lower}`]),
    )
    expectOk(answer)
    expectError(await h.get(`permissions.get${kind}?${lower}Id=${id}`), 404, 'NOT_FOUND')
  })
  // Both of Unkey's get tests are titled "return the role".
  same(`permissions_get${kind}.happy`, 'return the role', async (h) => {
    const made = await record(h, kind === 'Permission' ? 'permissions' : 'roles')
    const answer = await h.get(
      `permissions.get${kind}?${lower}Id=${made.id}`,
      await h.rootKey([`rbac.*.read_${lower}`]),
    )
    expectOk(answer)
    expect(answer.body).toMatchObject({ id: made.id, name: made.name })
    if (kind === 'Permission') expect(answer.body.slug).toBe(made.name)
    expect(answer.body.description).toBeUndefined()
  })
  same(
    `permissions_list${kind}s.happy`,
    `return all ${lower}s`,
    isolated(async (h) => {
      const made = await record(h, kind === 'Permission' ? 'permissions' : 'roles')
      const answer = await h.get(`permissions.list${kind}s`, await h.rootKey([`rbac.*.read_${lower}`]))
      expectOk(answer)
      expect(answer.body).toHaveLength(1)
      expect(answer.body[0]).toMatchObject({ id: made.id, name: made.name })
      if (kind === 'Permission') expect(answer.body[0].slug).toBe(made.name)
      expect(answer.body[0].description).toBeUndefined()
    }),
  )
}

// ---------------------------------------------------------------------------------------------------------------
// keys.getVerifications

same('keys_getVerifications.error', 'when the key does not exist', async (h) => {
  const keyId = newId('key')
  const answer = await h.get(`keys.getVerifications?keyId=${keyId}`, await h.rootKey([`api.${h.apiId}.read_key`]))
  expectError(answer, 404, 'NOT_FOUND', `key ${keyId} not found`)
  expect(answer.body.error.requestId).toMatch(/^req_[a-zA-Z0-9]+$/)
})
same('keys_getVerifications.error', 'without keyId or ownerId', async (h) => {
  const answer = await h.get('keys.getVerifications', await h.rootKey(['*']))
  expectError(answer, 400, 'BAD_REQUEST', 'keyId or ownerId must be provided')
  expect(answer.body.error.requestId).toMatch(/^req_[a-zA-Z0-9]+$/)
})
same('keys_getVerifications.happy', 'returns an empty verifications array', async (h) => {
  const { keyId } = await h.createKey()
  const answer = await h.get(`keys.getVerifications?keyId=${keyId}`, await h.rootKey([`api.${h.apiId}.read_key`]))
  expectOk(answer)
  expect(answer.body).toEqual({ verifications: [] })
})
deviation(
  'keys_getVerifications.happy',
  'ownerId works too',
  "ownerId needs an apiId beside it (Keygate finds an owner's keys per api): 400 BAD_REQUEST without one. Issue 14 asks for ownerId alone",
  async (h) => {
    const ownerId = randomUUID()
    for (let i = 0; i < 3; i++) await h.createKey({ ownerId })
    const rootKey = await h.rootKey([`api.${h.apiId}.read_key`])
    expectError(await h.get(`keys.getVerifications?ownerId=${ownerId}`, rootKey), 400, 'BAD_REQUEST', /^apiId: /)
    const answer = await h.get(`keys.getVerifications?ownerId=${ownerId}&apiId=${h.apiId}`, rootKey)
    expectOk(answer)
    expect(answer.body).toEqual({ verifications: [] })
  },
)

// ---------------------------------------------------------------------------------------------------------------
// keys.updateKey

const update = async (h: Harness, body: object, permissions = [`api.${h.apiId}.update_key`]) =>
  h.post('keys.updateKey', body, await h.rootKey(permissions))
const read = async (h: Harness, keyId: string) => {
  const answer = await h.get(`keys.getKey?keyId=${keyId}`)
  expectOk(answer)
  return answer.body
}
same('keys_updateKey.error', 'when the key does not exist', async (h) => {
  const keyId = newId('key')
  expectError(await update(h, { keyId, enabled: false }), 404, 'NOT_FOUND', `key ${keyId} not found`)
})
deviation('keys_updateKey.error', 'reject invalid refill config', VALIDATION_MESSAGE, async (h) => {
  const { keyId } = await h.createKey({ remaining: 10 })
  const answer = await update(h, { keyId, remaining: 10, refill: { amount: 100, refillDay: 4, interval: 'daily' } })
  expectError(answer, 400, 'BAD_REQUEST', /^refill\.refillDay: /)
})
same('keys_updateKey.error', 'when the key has been deleted', async (h) => {
  const { keyId } = await h.createKey()
  expectOk(await h.post('keys.deleteKey', { keyId }))
  expectError(await update(h, { keyId, enabled: false }), 404, 'NOT_FOUND', `key ${keyId} not found`)
})
deviation('keys_updateKey.happy', 'returns 200', IDENTITY_RIGHTS, async (h) => {
  const { keyId } = await h.createKey({ name: 'test' })
  const body = {
    keyId,
    name: 'test2',
    ownerId: unique('test2'),
    meta: { test: 'test' },
    expires: clock.now(),
    enabled: true,
  }
  expectError(await update(h, body), 403, 'INSUFFICIENT_PERMISSIONS')
  expect((await read(h, keyId)).name).toBe('test')
  expectOk(await update(h, body, [`api.${h.apiId}.update_key`, ...WITH_IDENTITY]))
})
deviation('keys_updateKey.happy', 'update all', IDENTITY_RIGHTS, async (h) => {
  const { keyId } = await h.createKey({ name: 'test' })
  const ratelimit = { type: 'fast', limit: 10, refillRate: 5, refillInterval: 1000 }
  const body = {
    keyId,
    name: 'newName',
    ownerId: 'newOwnerId',
    expires: null,
    meta: { new: 'meta' },
    ratelimit,
    remaining: 0,
    enabled: true,
  }
  expectError(await update(h, body), 403, 'INSUFFICIENT_PERMISSIONS')
  expectOk(await update(h, body, [`api.${h.apiId}.update_key`, ...WITH_IDENTITY]))
  const found = await read(h, keyId)
  expect(found).toMatchObject({ name: 'newName', ownerId: 'newOwnerId', meta: { new: 'meta' }, remaining: 0 })
  expect(found.ratelimit).toMatchObject({ limit: 10, duration: 1000 })
})
same('keys_updateKey.happy', 'update ratelimit', async (h) => {
  const { keyId } = await h.createKey({ name: 'test' })
  expectOk(
    await update(h, {
      keyId,
      ratelimit: { type: 'fast', limit: 10, refillRate: 5, refillInterval: 1000 },
      enabled: true,
    }),
  )
  const found = await read(h, keyId)
  expect(found.name).toBe('test')
  expect(found.ownerId).toBeUndefined()
  expect(found.meta).toBeUndefined()
  expect(found.remaining).toBeUndefined()
  expect(found.ratelimit).toMatchObject({ limit: 10, duration: 1000 })
})
for (const kind of ['roles', 'permissions'] as const) {
  const group = `update ${kind}`
  const add = `rbac.*.add_${singular(kind)}_to_key`
  const remove = `rbac.*.remove_${singular(kind)}_from_key`
  same('keys_updateKey.happy', `${group} > creates all missing ${kind}`, async (h) => {
    const { keyId } = await h.createKey()
    const name = randomUUID()
    const permissions = [
      'rbac.*.create_permission',
      'api.*.update_key',
      add,
      ...(kind === 'roles' ? ['rbac.*.create_role'] : []),
    ]
    expectOk(await update(h, { keyId, [kind]: [{ name, create: true }] }, permissions))
    expect(await heldBy(h, keyId, kind)).toContain(name)
  })
  same('keys_updateKey.happy', `${group} > connects all ${kind}`, async (h) => {
    const made = [await record(h, kind), await record(h, kind), await record(h, kind)]
    const { keyId } = await h.createKey()
    const permissions = ['rbac.*.create_permission', `api.${h.apiId}.update_key`, add]
    expectOk(await update(h, { keyId, [kind]: made.map(({ id }) => ({ id })) }, permissions))
    expect((await heldBy(h, keyId, kind)).sort()).toEqual(made.map(({ name }) => name).sort())
  })
  same('keys_updateKey.happy', `${group} > not desired ${kind} are removed`, async (h) => {
    const made = [await record(h, kind), await record(h, kind), await record(h, kind)]
    const { keyId } = await h.createKey()
    await attach(h, keyId, kind, made[0]!.id)
    const permissions = ['rbac.*.create_permission', add, remove, 'api.*.update_key']
    expectOk(await update(h, { keyId, [kind]: made.slice(1).map(({ id }) => ({ id })) }, permissions))
    expect((await heldBy(h, keyId, kind)).sort()).toEqual(
      made
        .slice(1)
        .map(({ name }) => name)
        .sort(),
    )
  })
  same('keys_updateKey.happy', `${group} > additional ${kind} does not remove existing ${kind}`, async (h) => {
    const made = [await record(h, kind), await record(h, kind), await record(h, kind)]
    const { keyId } = await h.createKey()
    await attach(h, keyId, kind, made[0]!.id)
    const permissions = ['rbac.*.create_permission', add, 'api.*.update_key']
    expectOk(await update(h, { keyId, [kind]: made.map(({ id }) => ({ id })) }, permissions))
    expect((await heldBy(h, keyId, kind)).sort()).toEqual(made.map(({ name }) => name).sort())
  })
}
same('keys_updateKey.happy', 'delete expires', async (h) => {
  const { keyId } = await h.createKey({ name: 'test', expires: clock.now() + 24 * 60 * 60 * 1000 })
  expectOk(await update(h, { keyId, expires: null, enabled: true }))
  const found = await read(h, keyId)
  expect(found.name).toBe('test')
  expect(found.ownerId).toBeUndefined()
  expect(found.meta).toBeUndefined()
  expect(found.expires).toBeUndefined()
})
for (const field of ['externalId', 'ownerId']) {
  deviation('keys_updateKey.happy', `externalId > set ${field} connects the identity`, IDENTITY_RIGHTS, async (h) => {
    const { keyId } = await h.createKey()
    const externalId = randomUUID()
    expectError(await update(h, { keyId, [field]: externalId }), 403, 'INSUFFICIENT_PERMISSIONS')
    expect((await read(h, keyId)).identity).toBeUndefined()
    expectOk(await update(h, { keyId, [field]: externalId }, [`api.${h.apiId}.update_key`, ...WITH_IDENTITY]))
    expect((await read(h, keyId)).identity?.externalId).toBe(externalId)
  })
  same('keys_updateKey.happy', `externalId > set ${field}=null disconnects the identity`, async (h) => {
    const identity = await newIdentity(h)
    const { keyId } = await h.createKey({ externalId: identity.externalId })
    expect((await read(h, keyId)).identity).toBeDefined()
    expectOk(await update(h, { keyId, [field]: null }))
    expect((await read(h, keyId)).identity).toBeUndefined()
  })
}
same('keys_updateKey.happy', 'externalId > omitting the field does not disconnect the identity', async (h) => {
  const identity = await newIdentity(h)
  const { keyId } = await h.createKey({ externalId: identity.externalId })
  expect((await read(h, keyId)).identity).toBeDefined()
  expectOk(await update(h, { keyId, externalId: undefined }))
  expect((await read(h, keyId)).identity?.externalId).toBe(identity.externalId)
})
deviation('keys_updateKey.happy', 'update should not affect undefined fields', IDENTITY_RIGHTS, async (h) => {
  const expires = clock.now() + 60 * 60 * 1000
  const { keyId } = await h.createKey({ name: 'test', ownerId: 'ownerId', expires })
  expectError(await update(h, { keyId, ownerId: 'newOwnerId', enabled: true }), 403, 'INSUFFICIENT_PERMISSIONS')
  expectOk(
    await update(h, { keyId, ownerId: 'newOwnerId', enabled: true }, [`api.${h.apiId}.update_key`, ...WITH_IDENTITY]),
  )
  const found = await read(h, keyId)
  expect(found).toMatchObject({ name: 'test', ownerId: 'newOwnerId', expires })
  expect(found.meta).toBeUndefined()
  expect(found.remaining).toBeUndefined()
  expect(found.ratelimit).toBeUndefined()
})
for (const [title, before, body, after] of [
  ['update enabled true', false, { enabled: true }, true],
  ['update enabled false', true, { enabled: false }, false],
  ['omit enabled update', true, {}, true],
] as const) {
  same('keys_updateKey.happy', title, async (h) => {
    const { keyId } = await h.createKey({ name: 'test', enabled: before })
    expectOk(await update(h, { keyId, ...body }))
    expect(await read(h, keyId)).toMatchObject({ name: 'test', enabled: after })
  })
}
deviation('keys_updateKey.happy', 'update ratelimit should not disable it', IDENTITY_RIGHTS, async (h) => {
  const unkeys = await h.rootKey([`api.${h.apiId}.create_key`, `api.${h.apiId}.update_key`])
  const fields = { apiId: h.apiId, name: 'my key', ownerId: 'team_123' }
  expectError(await h.post('keys.createKey', fields, unkeys), 403, 'INSUFFICIENT_PERMISSIONS')
  const rootKey = await h.rootKey([`api.${h.apiId}.create_key`, `api.${h.apiId}.update_key`, ...WITH_IDENTITY])
  const created = await h.post('keys.createKey', fields, rootKey)
  expectOk(created)
  const body = {
    keyId: created.body.keyId,
    name: 'Customer X',
    ownerId: 'user_123',
    ratelimit: { async: true, limit: 5, duration: 5000 },
  }
  expectOk(await h.post('keys.updateKey', body, rootKey))
  expect((await read(h, created.body.keyId)).ratelimit).toMatchObject({ limit: 5, duration: 5000 })
  const verified = await h.verify({ apiId: h.apiId, key: created.body.key })
  expect(verified.body.ratelimit).toMatchObject({ limit: 5, remaining: 4 })
})
same('keys_updateKey.happy', 'When refillDay is omitted. > should provide default value', async (h) => {
  const { keyId } = await h.createKey({ name: 'test', remaining: 10 })
  expectOk(await update(h, { keyId, refill: { interval: 'monthly', amount: 130 }, enabled: true }))
  expect(await read(h, keyId)).toMatchObject({ remaining: 10, refill: { amount: 130, refillDay: 1 } })
})
same('keys_updateKey.happy', 'update name > should not affect ratelimit config', async (h) => {
  const rootKey = await h.rootKey([`api.${h.apiId}.create_key`, `api.${h.apiId}.update_key`])
  const body = {
    apiId: h.apiId,
    prefix: 'prefix',
    name: 'my key',
    ratelimit: { async: true, limit: 10, duration: 1000 },
  }
  const created = await h.post('keys.createKey', body, rootKey)
  expectOk(created)
  expectOk(await h.post('keys.updateKey', { keyId: created.body.keyId, name: 'changed' }, rootKey))
  expect((await read(h, created.body.keyId)).ratelimit).toMatchObject({ limit: 10, duration: 1000 })
  const verified = await h.verify({ apiId: h.apiId, key: created.body.key })
  expect(verified.body.ratelimit).toMatchObject({ limit: 10, remaining: 9 })
})

// ---------------------------------------------------------------------------------------------------------------
// keys.verifyKey

/** A key with no credits left: createKey takes remaining >= 1 (Unkey's test writes 0 to its database). */
async function spentKey(h: Harness, fields: object = {}) {
  const created = await h.createKey({ remaining: 1, ...fields })
  expectOk(await h.post('keys.updateRemaining', { keyId: created.keyId, op: 'set', value: 0 }))
  return created
}

same('keys_verifyKey', 'returns 200', async (h) => {
  const { key } = await h.createKey()
  const answer = await h.verify({ key, apiId: h.apiId })
  expectOk(answer)
  expect(answer.body.valid).toBe(true)
})
same('keys_verifyKey', 'returns a requestId', async (h) => {
  const { key } = await h.createKey()
  const answer = await h.verify({ key, apiId: h.apiId })
  expectOk(answer)
  expect(answer.body.requestId).toBeDefined()
})
same('keys_verifyKey', 'bad request > returns 400', async (h) => {
  await h.createKey()
  expect((await h.verify({ something: 'else' })).status).toBe(400)
})
same('keys_verifyKey', 'with temporary key > returns valid', async (h) => {
  const { key } = await h.createKey({ expires: clock.now() + 2000 })
  expect((await h.verify({ key, apiId: h.apiId })).body.valid).toBe(true)
  clock.advance(2500)
  const after = await h.verify({ key, apiId: h.apiId })
  expectOk(after)
  expect(after.body.valid).toBe(false)
})
same(
  'keys_verifyKey',
  'with temporary key > returns all data',
  isolated(async (h) => {
    // Unkey's test stores a key that expires the moment it is made; createKey wants a future time, so 1 ms ahead.
    const ownerId = newId('key')
    const permission = await h.post('permissions.createPermission', { name: 'permission' })
    expectOk(permission)
    const role = await h.post('permissions.createRole', { name: 'role' })
    expectOk(role)
    const expires = clock.now() + 1
    const meta = { hello: 'world' }
    const fields = { name: 'hello world', ownerId, expires, environment: 'prod', meta }
    const { keyId, key } = await h.createKey(fields)
    expectOk(await h.post('keys.addPermissions', { keyId, permissions: [{ id: permission.body.permissionId }] }))
    expectOk(await h.post('keys.addRoles', { keyId, roles: [{ id: role.body.roleId }] }))
    clock.advance(2500)
    const answer = await h.verify({ key, apiId: h.apiId })
    expectOk(answer)
    expect(answer.body).toMatchObject({
      valid: false,
      code: 'EXPIRED',
      meta,
      expires,
      environment: 'prod',
      name: 'hello world',
      ownerId,
    })
    expect(answer.body.permissions).toMatchObject(['permission'])
    expect(answer.body.roles).toMatchObject(['role'])
  }),
)
same('keys_verifyKey', 'with metadata > returns meta when key is disabled', async (h) => {
  const { key } = await h.createKey({ meta: { disabledReason: 'cause I can' }, enabled: false })
  const answer = await h.verify({ key, apiId: h.apiId })
  expectOk(answer)
  expect(answer.body.valid).toBe(false)
  expect(answer.body.meta).toMatchObject({ disabledReason: 'cause I can' })
})
same('keys_verifyKey', 'with identity > returns the identity', async (h) => {
  const identity = await newIdentity(h)
  const { key } = await h.createKey({ externalId: identity.externalId, enabled: true })
  const answer = await h.verify({ key, apiId: h.apiId })
  expectOk(answer)
  expect(answer.body.valid).toBe(true)
  expect(answer.body.identity).toMatchObject({ id: identity.id, externalId: identity.externalId })
})
same('keys_verifyKey', 'with identity > returns the meta', async (h) => {
  const meta = { hello: 'world' }
  const identity = await newIdentity(h, { meta })
  const { key } = await h.createKey({ externalId: identity.externalId, enabled: true })
  const answer = await h.verify({ key, apiId: h.apiId })
  expectOk(answer)
  expect(answer.body.valid).toBe(true)
  expect(answer.body.identity).toMatchObject({ id: identity.id, externalId: identity.externalId, meta })
})
deviation(
  'keys_verifyKey',
  'when ratelimited > returns ownerId and identity ',
  "a key's limit is at least 1 a window (Unkey's test writes a limit of 0 to its database): this key's one unit is used by a first call, and the second is the one rate limited",
  async (h) => {
    const identity = await newIdentity(h)
    const { key } = await h.createKey({
      externalId: identity.externalId,
      ratelimit: { limit: 1, duration: 60_000 },
    })
    expectOk(await h.verify({ key, apiId: h.apiId }))
    const answer = await h.verify({ key, apiId: h.apiId })
    expectOk(answer)
    expect(answer.body).toMatchObject({ valid: false, code: 'RATE_LIMITED', ownerId: identity.externalId })
    expect(answer.body.identity.externalId).toBe(identity.externalId)
    expectError(
      await h.post('keys.createKey', { apiId: h.apiId, ratelimit: { limit: 0, duration: 60_000 } }),
      400,
      'BAD_REQUEST',
    )
  },
)
same('keys_verifyKey', 'with ratelimit override > deducts the correct number of tokens', async (h) => {
  const { key } = await h.createKey({ ratelimit: { limit: 10, duration: 60_000 } })
  const answer = await h.verify({ key, apiId: h.apiId, ratelimit: { cost: 4 } })
  expectOk(answer)
  expect(answer.body.valid).toBe(true)
})
same('keys_verifyKey', 'with default ratelimit > uses the on-key defined settings', async (h) => {
  const { key } = await h.createKey({ ratelimit: { limit: 10, duration: 60_000 } })
  const answer = await h.verify({ key, apiId: h.apiId, ratelimits: [{ name: 'default' }] })
  expectOk(answer)
  expect(answer.body.valid).toBe(true)
  expect(answer.body.ratelimit.limit).toBe(10)
})
same('keys_verifyKey', 'with remaining > custom cost works', async (h) => {
  const { key } = await h.createKey({ remaining: 10 })
  const answer = await h.verify({ key, apiId: h.apiId, remaining: { cost: 2 } })
  expectOk(answer)
  expect(answer.body).toMatchObject({ valid: true, remaining: 8 })
})
same('keys_verifyKey', 'with remaining > cost=0 works even when remaining=0', async (h) => {
  const { key } = await spentKey(h)
  const answer = await h.verify({ key, apiId: h.apiId, remaining: { cost: 0 } })
  expectOk(answer)
  expect(answer.body).toMatchObject({ valid: true, remaining: 0 })
})
same('keys_verifyKey', 'with ratelimit > with used up key > returns valid=false and correct code ', async (h) => {
  const { key } = await spentKey(h, { ratelimit: { limit: 10, duration: 60_000 } })
  const answer = await h.verify({ key, apiId: h.apiId })
  expectOk(answer)
  expect(answer.body).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED' })
})
/** Unkey's tests whitelist their api in its database; Keygate's createApi takes the list (ipWhitelist, Keygate's). */
const whitelistedApi = async (h: Harness, address: string) => {
  const created = await h.post('apis.createApi', { name: 'test', ipWhitelist: [address] })
  expectOk(created)
  return created.body.apiId as string
}
deviation(
  'keys_verifyKey',
  'with ip whitelist > with valid ip > returns valid',
  "the client's address is the connection's, or one a trusted proxy names in X-Forwarded-For (CLIENT_ADDRESS, TRUSTED_PROXIES), never a True-Client-IP header that any client can send: the request comes from 100.100.100.100 instead of naming it",
  async (h) => {
    const apiId = await whitelistedApi(h, '100.100.100.100')
    const { body } = await h.post('keys.createKey', { apiId })
    const answer = await h.verify({ key: body.key, apiId }, { from: '100.100.100.100' })
    expectOk(answer)
    expect(answer.body.valid).toBe(true)
    // Naming the address in a header does not make it the client's.
    const named = await h.verify({ key: body.key, apiId }, { headers: { 'true-client-ip': '100.100.100.100' } })
    expect(named.body).toMatchObject({ valid: false, code: 'FORBIDDEN' })
  },
)
same('keys_verifyKey', 'with ip whitelist > with invalid ip > returns invalid', async (h) => {
  const apiId = await whitelistedApi(h, '100.100.100.100')
  const { body } = await h.post('keys.createKey', { apiId })
  // As Unkey's test sends it: the harness's api, not the key's, and an address in True-Client-IP.
  const answer = await h.verify({ key: body.key, apiId: h.apiId }, { headers: { 'true-client-ip': '200.200.200.200' } })
  expectOk(answer)
  expect(answer.body).toMatchObject({ valid: false, code: 'FORBIDDEN' })
  // Refused for the address alone too: the key's own api, from 200.200.200.200.
  const fromThere = await h.verify({ key: body.key, apiId }, { from: '200.200.200.200' })
  expect(fromThere.body).toMatchObject({ valid: false, code: 'FORBIDDEN' })
})
same('keys_verifyKey', 'with enabled key > returns valid', async (h) => {
  const apiId = await newApi(h)
  const { body } = await h.post('keys.createKey', { apiId, enabled: true })
  const answer = await h.verify({ key: body.key, apiId })
  expectOk(answer)
  expect(answer.body.valid).toBe(true)
})
same('keys_verifyKey', 'with disabled key > returns invalid', async (h) => {
  const apiId = await newApi(h)
  const { body } = await h.post('keys.createKey', { apiId, enabled: false })
  const answer = await h.verify({ key: body.key, apiId })
  expectOk(answer)
  expect(answer.body).toMatchObject({ valid: false, code: 'DISABLED' })
})
same('keys_verifyKey', 'returns the environment of a key', async (h) => {
  const { key } = await h.createKey({ environment: 'test' })
  const answer = await h.verify({ key, apiId: h.apiId })
  expectOk(answer)
  expect(answer.body).toMatchObject({ valid: true, environment: 'test' })
})
same('keys_verifyKey', 'key is soft deleted > returns NOT_FOUND', async (h) => {
  const { keyId, key } = await h.createKey()
  expectOk(await h.post('keys.deleteKey', { keyId }))
  expect((await h.verify({ key, apiId: h.apiId })).body).toMatchObject({ valid: false, code: 'NOT_FOUND' })
})
na(
  'keys_verifyKey',
  'key exists but keyspace is soft deleted > returns NOT_FOUND',
  'a keyspace (keyAuth) is a database row of its own in Unkey; a Keygate api is its keyspace (deleting the api: the next two tests)',
)
for (const title of [
  'key exists but api is soft deleted > returns NOT_FOUND',
  'key exists but api is hard deleted > returns NOT_FOUND',
]) {
  same('keys_verifyKey', title, async (h) => {
    const { key } = await h.createKey()
    expectOk(await h.post('apis.deleteApi', { apiId: h.apiId }))
    expect((await h.verify({ key })).body).toMatchObject({ valid: false, code: 'NOT_FOUND' })
  })
}
na(
  'keys_verifyKey',
  'ownerId prioritization > returns identity.externalId over key.ownerId when both exist',
  "a key belongs to the identity of its own ownerId/externalId (one field): a key whose ownerId differs from its identity's externalId is a row only Unkey's database can hold",
)
same('keys_verifyKey', 'ownerId prioritization > returns key.ownerId when no identity exists', async (h) => {
  const { key } = await h.createKey({ ownerId: 'key-owner-123', enabled: true })
  const answer = await h.verify({ key, apiId: h.apiId })
  expectOk(answer)
  expect(answer.body).toMatchObject({ valid: true, ownerId: 'key-owner-123' })
})

// keys.verifyKey.error and .multilimit: named limits on a key and on its identity. Unkey's tests write the limits to
// its database; here a key's are given to createKey (`ratelimits`, and `ratelimit` for the one named `default`), an
// identity's to createIdentity, and the key is the identity's by its externalId.
const MISSING_LIMIT_MESSAGE =
  "message in Keygate's words (`ratelimits.0: the key … has no limit named …; give limit and duration to define one for this call`); status 400 and code BAD_REQUEST as Unkey's"
deviation(
  'keys_verifyKey.error',
  'with identity > with ratelimits > missing ratelimit > returns 400 and a useful error message',
  MISSING_LIMIT_MESSAGE,
  async (h) => {
    const identity = await newIdentity(h, {
      ratelimits: [{ name: 'existing-ratelimit', limit: 100, duration: 60_000 }],
    })
    const { key, keyId } = await h.createKey({ externalId: identity.externalId })
    const answer = await h.verify({ key, ratelimits: [{ name: 'does-not-exist' }] })
    expectError(
      answer,
      400,
      'BAD_REQUEST',
      `ratelimits.0: the key ${keyId} and its identity have no limit named "does-not-exist"; give limit and duration to define one for this call`,
    )
  },
)
deviation(
  'keys_verifyKey.error',
  'without identity > with ratelimits > missing ratelimit > returns 400 and a useful error message',
  MISSING_LIMIT_MESSAGE,
  async (h) => {
    const { key, keyId } = await h.createKey({
      ratelimits: [{ name: 'existing-ratelimit', limit: 100, duration: 60_000 }],
    })
    const answer = await h.verify({ key, ratelimits: [{ name: 'does-not-exist' }] })
    expectError(
      answer,
      400,
      'BAD_REQUEST',
      `ratelimits.0: the key ${keyId} has no identity and no limit named "does-not-exist"; give limit and duration to define one for this call`,
    )
  },
)
/** Verifies `key` naming `ratelimits`, and checks the answer: valid, code and the limit it names as triggered. */
async function expectVerdict(
  h: Harness,
  key: string,
  ratelimits: object[] | undefined,
  expected: { valid: boolean; code: string; triggered?: string },
) {
  const answer = await h.verify({ key, apiId: h.apiId, ...(ratelimits ? { ratelimits } : {}) })
  expectOk(answer)
  expect(answer.body).toMatchObject({ valid: expected.valid, code: expected.code })
  expect(answer.headers['unkey-ratelimit-triggered']).toEqual(expected.triggered)
}
const VALID = { valid: true, code: 'VALID' }
const limitedBy = (triggered: string) => ({ valid: false, code: 'RATE_LIMITED', triggered })
/** A key of an identity: `identityLimits` on the identity, `keyLimits` on the key. */
async function identityKey(h: Harness, identityLimits: object[], keyLimits: object[] = []) {
  const identity = await newIdentity(h, { ratelimits: identityLimits })
  return h.createKey({ externalId: identity.externalId, ...(keyLimits.length ? { ratelimits: keyLimits } : {}) })
}
same(
  'keys_verifyKey.multilimit',
  'with identity > with multiple keys per identity > ratelimit is shared across many keys',
  async (h) => {
    const identity = await newIdentity(h, { ratelimits: [{ name: '100per10m', limit: 100, duration: 600_000 }] })
    const keys = await Promise.all(Array.from({ length: 20 }, () => h.createKey({ externalId: identity.externalId })))
    let passed = 0
    for (let i = 0; i < 1000; i++) {
      const answer = await h.verify({
        key: keys[i % keys.length]!.key,
        apiId: h.apiId,
        ratelimits: [{ name: '100per10m' }],
      })
      expectOk(answer)
      if (answer.body.code === 'VALID') passed++
    }
    expect(passed).toBeGreaterThanOrEqual(100)
    expect(passed).toBeLessThanOrEqual(300)
  },
)
same(
  'keys_verifyKey.multilimit',
  'with identity > with multiple keys per identity > a second key is rejected',
  async (h) => {
    // Windows are aligned to the epoch and this file's clock starts at the wall clock's time: the test moves it
    // 10 s, so it starts at a window's start, or a boundary could fall between the two keys' calls (seen: 1 of 10).
    clock.advance(300_000 - (clock.now() % 300_000))
    const identity = await newIdentity(h, { ratelimits: [{ name: '10per5m', limit: 10, duration: 300_000 }] })
    const first = await h.createKey({ externalId: identity.externalId })
    const second = await h.createKey({ externalId: identity.externalId })
    for (let i = 0; i < 20; i++) {
      expectOk(await h.verify({ key: first.key, apiId: h.apiId, ratelimits: [{ name: '10per5m' }] }))
    }
    let limited = 0
    for (let i = 0; i < 10; i++) {
      const answer = await h.verify({ key: second.key, apiId: h.apiId, ratelimits: [{ name: '10per5m' }] })
      expectOk(answer)
      if (answer.body.code === 'RATE_LIMITED') limited++
      // Unkey's test waits a second between calls; the clock here is moved instead (all within the 5-minute window).
      clock.advance(1000)
    }
    expect(limited).toBeGreaterThanOrEqual(9)
  },
)
const BOTH = [{ name: 'limit1' }, { name: 'limit2' }]
for (const [title, keyLimit, identityLimits, expected] of [
  ['ratelimits on key should take precedence and pass', 4, [1, 10], [VALID, VALID, VALID]],
  [
    'ratelimits on key should take precedence and reject',
    1,
    [10, 10],
    [VALID, limitedBy('limit1'), limitedBy('limit1')],
  ],
  ['fallback limits must still reject', 4, [10, 2], [VALID, VALID, limitedBy('limit2')]],
] as const) {
  same('keys_verifyKey.multilimit', `with identity > with ratelimits on key and identity > ${title}`, async (h) => {
    const { key } = await identityKey(
      h,
      [
        { name: 'limit1', limit: identityLimits[0], duration: 600_000 },
        { name: 'limit2', limit: identityLimits[1], duration: 600_000 },
      ],
      [{ name: 'limit1', limit: keyLimit, duration: 10_000 }],
    )
    for (const verdict of expected) await expectVerdict(h, key, BOTH, verdict)
  })
}
same(
  'keys_verifyKey.multilimit',
  'with identity > with ratelimits on key and identity > both limits must reject',
  async (h) => {
    const { key } = await identityKey(
      h,
      [
        { name: 'limit1', limit: 10, duration: 600_000 },
        { name: 'limit2', limit: 2, duration: 600_000 },
      ],
      [{ name: 'limit1', limit: 1, duration: 10_000 }],
    )
    for (const [ratelimits, triggered, most] of [
      [BOTH, 'limit1', 5],
      [[{ name: 'limit1' }], 'limit1', 10],
      [[{ name: 'limit2' }], 'limit2', 10],
    ] as const) {
      let passed = 0
      for (;;) {
        const answer = await h.verify({ key, apiId: h.apiId, ratelimits })
        expectOk(answer)
        if (answer.body.valid) {
          passed++
          expect(passed).toBeLessThanOrEqual(most)
          continue
        }
        expect(answer.headers['unkey-ratelimit-triggered']).toBe(triggered)
        break
      }
    }
  },
)
same(
  'keys_verifyKey.multilimit',
  "with identity > without specifying ratelimits in request > should use the 'default' limit",
  async (h) => {
    const identity = await newIdentity(h)
    // The key's own `ratelimit` is its limit named `default`, applied to every verification.
    const { key } = await h.createKey({ externalId: identity.externalId, ratelimit: { limit: 1, duration: 20_000 } })
    for (const verdict of [VALID, limitedBy('default'), limitedBy('default')]) {
      await expectVerdict(h, key, undefined, verdict)
    }
  },
)
same(
  'keys_verifyKey.multilimit',
  'with identity > falls back to limits defined for the identity > should reject after the first limit hit',
  async (h) => {
    const { key } = await identityKey(h, [
      { name: 'tokens', limit: 10, duration: 10_000 },
      { name: '10_per_10m', limit: 10, duration: 600_000 },
    ])
    for (const [cost, verdict] of [
      [4, VALID],
      [6, VALID],
      [1, limitedBy('tokens')],
    ] as const) {
      await expectVerdict(h, key, [{ name: 'tokens', cost }, { name: '10_per_10m' }], verdict)
    }
  },
)
const TWO_LIMITS = (secondCost: number) => [
  { name: '10/10s', cost: 4, limit: 10, duration: 10_000 },
  { name: '1/1min', cost: secondCost, limit: 1, duration: 60_000 },
]
same('keys_verifyKey.multilimit', 'without identities > returns valid', async (h) => {
  const { key } = await h.createKey()
  const answer = await h.verify({ key, apiId: h.apiId, ratelimits: TWO_LIMITS(1) })
  expectOk(answer)
  expect(answer.body).toMatchObject({ valid: true, code: 'VALID' })
})
same('keys_verifyKey.multilimit', 'without identities > returns RATE_LIMITED', async (h) => {
  const { key } = await h.createKey()
  const answer = await h.verify({ key, apiId: h.apiId, ratelimits: TWO_LIMITS(2) })
  expectOk(answer)
  expect(answer.body).toMatchObject({ valid: false, code: 'RATE_LIMITED' })
})
same('keys_verifyKey.multilimit', 'without identities > without config > returns error', async (h) => {
  const { key } = await h.createKey()
  const ratelimits = [{ name: 'missing_config', cost: 4 }, TWO_LIMITS(2)[1]]
  expect((await h.verify({ key, apiId: h.apiId, ratelimits })).status).toBe(400)
})
for (let i = 1; i <= 5; i++) {
  na(
    'keys_verifyKey.ratelimit_accuracy',
    `name #${i}`,
    "a wall-clock load test (15 to 420 s at up to 300 requests a second), beyond this file's budget",
  )
}

// keys.verifyKey.permissions: roles granting permissions, and a permission query. Unkey's names (r1, p1, ...) repeat
// from case to case, each in a workspace of its own, and are written to its database past the 3-character minimum
// createRole has: here each case's names get a suffix of their own, in the query too.
type Query = string | { and: Query[] } | { or: Query[] }
const and = (...q: Query[]): Query => ({ and: q })
const or = (...q: Query[]): Query => ({ or: q })
const ALL = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6']
const PERMISSION_CASES: [string, [string, string[]][], Query | undefined, boolean][] = [
  ['No Roles and no query', [], undefined, true],
  ['No query', [[newId('role'), []]], undefined, true],
  ['Single role, single permission', [[newId('role'), ['p1']]], or('p1'), true],
  ['No roles, but required', [], or('p1'), false],
  [
    "nested of 'and' and 'or'",
    [
      ['r1', ['p1', 'p2', 'p3']],
      ['r2', ['p1', 'p4', 'p5']],
    ],
    and('p1', or('p2', 'p6', and('p4', 'p2'))),
    true,
  ],
  [
    'Simple role check (Pass)',
    [
      ['r1', ['p1', 'p2', 'p3']],
      ['r2', ['p4', 'p5', 'p6']],
    ],
    'p1',
    true,
  ],
  ['Simple role check (Fail)', [['r1', ALL]], 'p7', false],
  ["'and' of two permissions (Pass)", [['r1', ALL]], and('p1', 'p2'), true],
  ["'and' of two permissions (Fail)", [['r1', ALL]], and('p1', 'p7'), false],
  ["'or' of two permissions (Pass)", [['r1', ALL]], or('p1', 'p7'), true],
  [
    "or' of two permissions (Fail)",
    [
      ['r1', ['p1']],
      ['r2', ['p2']],
      ['r4', ['p4']],
      ['r5', ['p5']],
      ['r6', ['p6']],
    ],
    or('p7', 'p3'),
    false,
  ],
  ["and' and 'or' combination (Pass)", [['r1', ALL]], and('p1', or('p2', 'p3')), true],
  [
    "'and' and 'or' combination (Fail)",
    [
      ['r1', ['p2', 'p3']],
      ['r2', ['p4']],
      ['r3', ['p5', 'p6']],
    ],
    and('p1', or('p7', 'p5')),
    false,
  ],
  ["Deep nesting of 'and'(Pass)", [['r1', ALL]], and('p1', and('p2', and('p3', 'p4'))), true],
  ["Deep nesting of 'and' (Fail)", [['r1', ALL]], and('p1', and('p7', 'p3')), false],
  ["Deep nesting of 'or'(Pass)", [['r1', ALL]], or('p1', or('p2', or('p3', 'p4'))), true],
  [
    "Deep nesting of 'or' (Fail)",
    [
      ['r1', ['p1', 'p2', 'p3']],
      ['r2', ['p4']],
    ],
    or('p7', or('p5', 'p6')),
    false,
  ],
  ["Complex combination of 'and' and 'or'(Pass)", [['r1', ALL]], or(and('p1', 'p2'), and('p3', 'p4')), true],
  [
    "Complex combination of 'and' and 'or' (Fail)",
    [['r1', ['p1', 'p2', 'p3', 'p4', 'p6']]],
    or(and('p1', 'p7'), and('p5', 'p6')),
    false,
  ],
  ['Multiple levels of nesting(Pass)', [['r1', ALL]], or(and('p1', or('p2', and('p3', 'p4'))), 'p5'), true],
  [
    'Multiple levels of nesting (Fail)',
    [['r1', ['p2', 'p3', 'p4', 'p5']]],
    or(and('p1', or('p7', and('p3', 'p4'))), 'p6'),
    false,
  ],
  [
    "Complex combination of 'and' and 'or' at different levels (Pass)",
    [['r1', ALL]],
    or(and('p1', or('p2', and('p3', 'p4'))), and('p5', 'p6')),
    true,
  ],
  [
    "Complex combination of 'and' and 'or' at different levels (Fail)",
    [['r1', ['p2', 'p3', 'p4', 'p5', 'p6']]],
    or(and('p1', or('p7', and('p3', 'p4'))), and('p5', 'p7')),
    false,
  ],
]
for (const [name, roles, query, valid] of PERMISSION_CASES) {
  same('keys_verifyKey.permissions', `${name} > returns valid=${valid}`, async (h) => {
    const suffix = `-${randomUUID().slice(0, 8)}`
    const own = (q: Query): Query =>
      typeof q === 'string' ? `${q}${suffix}` : 'and' in q ? { and: q.and.map(own) } : { or: q.or.map(own) }
    for (const [role, permissions] of roles) {
      const made = await h.post('permissions.createRole', { name: `${role}${suffix}` })
      expectOk(made)
      if (permissions.length === 0) continue
      const grants = permissions.map((permission) => ({ name: `${permission}${suffix}`, create: true }))
      expectOk(await h.post('permissions.setRolePermissions', { roleId: made.body.roleId, permissions: grants }))
    }
    const { key } = await h.createKey(roles.length ? { roles: roles.map(([role]) => `${role}${suffix}`) } : {})
    const authorization = query ? { authorization: { permissions: own(query) } } : {}
    const answer = await h.verify({ key, apiId: h.apiId, ...authorization })
    expectOk(answer)
    expect(answer.body.valid, JSON.stringify(answer.body)).toBe(valid)
  })
}

// ---------------------------------------------------------------------------------------------------------------
// migrations.createKeys

/** What Unkey's `sha256()` gives: the base64 SHA-256 of a string. */
const sha256 = (text: string) => createHash('sha256').update(text).digest('base64')
const migrate = async (h: Harness, keys: object[], permissions = [`api.${h.apiId}.create_key`]) =>
  h.post(
    'migrations.createKeys',
    keys.map((key) => ({ apiId: h.apiId, ...key })),
    await h.rootKey(permissions),
  )

same('migrations_createKey.error', 'when the api does not exist', async (h) => {
  const apiId = newId('api')
  const body = [{ start: 'x', hash: { value: sha256('x'), variant: 'sha256_base64' }, apiId }]
  const answer = await h.post('migrations.createKeys', body, await h.rootKey([`api.${apiId}.create_key`]))
  expectError(answer, 404, 'NOT_FOUND', `api ${apiId} not found`)
})
na('migrations_createKey.error', 'when the api has no keyAuth', 'an api without keyAuth exists only in the database')
same('migrations_createKey.error', 'reject invalid ratelimit config', async (h) => {
  const answer = await migrate(
    h,
    [{ start: 'x', hash: { value: 'x', variant: 'sha256_base64' }, ratelimit: { type: 'x' } }],
    ['*'],
  )
  expect(answer.status).toBe(400)
  expect(answer.body.error.code).toBe('BAD_REQUEST')
})
deviation(
  'migrations_createKey.error',
  'reject invalid refill config when daily interval has non-null refillDay',
  `${MIGRATION_HASH}; the message is Keygate's (status and code as Unkey's)`,
  async (h) => {
    const refill = { amount: 100, refillDay: 4, interval: 'daily' }
    const answer = await migrate(
      h,
      [{ start: 'x', hash: { value: 'x', variant: 'sha256_base64' }, remaining: 10, refill }],
      ['*'],
    )
    expectError(answer, 400, 'BAD_REQUEST')
  },
)
/** The imported key, read back (Unkey's tests read the row). */
const imported = async (h: Harness, keyId: string) => read(h, keyId)
same('migrations_createKey.happy', 'creates key', async (h) => {
  const plaintext = randomUUID()
  const answer = await migrate(h, [
    { start: 'start_', hash: { value: sha256(plaintext), variant: 'sha256_base64' }, enabled: true },
  ])
  expectOk(answer)
  // The stored hash is the one sent: the key it is the hash of verifies.
  expect((await h.verify({ key: plaintext })).body).toMatchObject({ valid: true, keyId: answer.body.keyIds[0] })
})
for (const [group, enabled, title, expected] of [
  ['not set', undefined, 'should still create an enabled key', true],
  ['enabled: false', false, 'should create a disabled key', false],
  ['enabled: true', true, 'should create an enabled key', true],
] as const) {
  same('migrations_createKey.happy', `with enabled flag > ${group} > ${title}`, async (h) => {
    const hash = { value: sha256(randomUUID()), variant: 'sha256_base64' }
    const answer = await migrate(h, [{ start: 'start_', hash, ...(enabled === undefined ? {} : { enabled }) }])
    expectOk(answer)
    expect((await imported(h, answer.body.keyIds[0])).enabled).toBe(expected)
  })
}
same('migrations_createKey.happy', 'with prefix > start includes prefix', async (h) => {
  const hash = { value: sha256(randomUUID()), variant: 'sha256_base64' }
  const answer = await migrate(h, [{ start: 'start_', hash, enabled: true }])
  expectOk(answer)
  expect((await imported(h, answer.body.keyIds[0])).start).toBe('start_')
})
/**
 * Imports a key with `externalId`, and checks that it belongs to that externalId's identity: refused, nothing
 * imported, with Unkey's root key (IDENTITY_RIGHTS).
 */
async function importedWithIdentity(h: Harness, externalId: string) {
  const hash = { value: sha256(randomUUID()), variant: 'sha256_base64' }
  expectError(await migrate(h, [{ hash, enabled: true, externalId }]), 403, 'INSUFFICIENT_PERMISSIONS')
  const answer = await migrate(
    h,
    [{ hash, enabled: true, externalId }],
    [`api.${h.apiId}.create_key`, ...WITH_IDENTITY],
  )
  expectOk(answer)
  const identity = (await imported(h, answer.body.keyIds[0])).identity
  expect(identity?.externalId).toBe(externalId)
  expect(identity?.id).toBe((await h.get(`identities.getIdentity?externalId=${externalId}`)).body.id)
}
deviation(
  'migrations_createKey.happy',
  'with externalId > when identity does not exist > should create an identity',
  IDENTITY_RIGHTS,
  async (h) => importedWithIdentity(h, randomUUID()),
)
deviation(
  'migrations_createKey.happy',
  'with externalId > when identity does exist > should link the identity',
  IDENTITY_RIGHTS,
  async (h) => importedWithIdentity(h, (await newIdentity(h)).externalId),
)
same('migrations_createKey.happy', 'roles > connects the specified roles', async (h) => {
  // Unkey's "roles" test sends permissions (and its "permissions" test roles).
  const permissions = [unique('p1'), unique('p2')]
  for (const name of permissions) expectOk(await h.post('permissions.createPermission', { name }))
  const answer = await migrate(h, [{ start: 'start_', plaintext: randomUUID(), permissions }])
  expectOk(answer)
  expect((await permissionsOf(h, answer.body.keyIds[0])).sort()).toEqual(permissions.sort())
})
same('migrations_createKey.happy', 'permissions > connects the specified permissions', async (h) => {
  const roles = [unique('r1'), unique('r2')]
  for (const name of roles) expectOk(await h.post('permissions.createRole', { name }))
  const answer = await migrate(h, [
    { start: 'start_', hash: { value: sha256(randomUUID()), variant: 'sha256_base64' }, roles },
  ])
  expectOk(answer)
  expect((await rolesOf(h, answer.body.keyIds[0])).sort()).toEqual(roles.sort())
})
same('migrations_createKey.happy', 'creates a key with environment', async (h) => {
  const answer = await migrate(h, [
    { start: 'start_', hash: { value: sha256(randomUUID()), variant: 'sha256_base64' }, environment: 'test' },
  ])
  expectOk(answer)
  expect((await imported(h, answer.body.keyIds[0])).environment).toBe('test')
})
deviation('migrations_createKey.happy', 'creates 100 keys', MIGRATION_HASH, async (h) => {
  const keys = Array.from({ length: 100 }, (_, i) => ({
    start: String(i),
    hash: { value: randomUUID(), variant: 'sha256_base64' },
    enabled: i % 2 === 0,
  }))
  expectError(await migrate(h, keys), 400, 'BAD_REQUEST')
})
deviation(
  'migrations_createKey.happy',
  'an error rolls back and does not create any keys',
  `${MIGRATION_HASH} (409 CONFLICT for the repeated key once the hashes are digests); nothing is written either way`,
  async (h) => {
    const keys = Array.from({ length: 10 }, (_, i) => ({
      start: String(i),
      hash: { value: randomUUID(), variant: 'sha256_base64' },
      enabled: i % 2 === 0,
    }))
    keys.push(keys[0]!)
    expectError(await migrate(h, keys), 400, 'BAD_REQUEST')
    expect((await h.get(`apis.listKeys?apiId=${h.apiId}`)).body.keys).toEqual([])
  },
)
na(
  'migrations_createKey.happy',
  'retrieves a key in plain text',
  'Keygate stores no key it could decrypt (hashes only)',
)
same('migrations_createKey.happy', 'migrate and verify a key', async (h) => {
  const key = `test_${randomUUID().replace(/-/g, '')}`
  const answer = await migrate(h, [{ plaintext: key }])
  expectOk(answer)
  expect(answer.body.keyIds).toHaveLength(1)
  const verified = await h.verify({ key })
  expectOk(verified)
  expect(verified.body.valid).toBe(true)
})
same(
  'migrations_createKey.happy',
  'Should default to first day of month if none provided > should provide default value',
  async (h) => {
    const hash = { value: sha256(randomUUID()), variant: 'sha256_base64' }
    const answer = await migrate(h, [
      { start: 'start_', hash, enabled: true, remaining: 10, refill: { interval: 'monthly', amount: 100 } },
    ])
    expectOk(answer)
    expect(await imported(h, answer.body.keyIds[0])).toMatchObject({
      remaining: 10,
      refill: { amount: 100, refillDay: 1 },
    })
  },
)

// ---------------------------------------------------------------------------------------------------------------
// identities.*: Unkey's tests write identities and their limits to the database; here they are made through
// identities.createIdentity (and a key "of" an identity is one created with its externalId, which is how Keygate
// binds them), and read back through getIdentity.

interface MadeIdentity {
  id: string
  externalId: string
}
async function newIdentity(h: Harness, fields: object = {}): Promise<MadeIdentity> {
  const externalId = randomUUID()
  const answer = await h.post('identities.createIdentity', { externalId, ...fields })
  expectOk(answer)
  return { id: answer.body.identityId, externalId }
}
async function identityOf(h: Harness, identityId: string) {
  const answer = await h.get(`identities.getIdentity?identityId=${identityId}`)
  expectOk(answer)
  return answer.body
}
/** A stored limit as Unkey's tests look for it: name, limit and duration. */
const limitFields = (list: { name: string; limit: number; duration: number }[]) =>
  list.map(({ name, limit, duration }) => ({ name, limit, duration }))
const byName = <T extends { name: string }>(list: T[]) => [...list].sort((a, b) => a.name.localeCompare(b.name))

const identityRoute = (
  method: 'GET' | 'POST',
  path: (identityId: string) => string,
  body?: (identityId: string) => object,
): Route => ({
  async request(h) {
    const { id } = await newIdentity(h)
    return { method, path: path(id), ...(body ? { body: body(id) } : {}), subject: id }
  },
})
const identityRows = (action: string, legacy = false): [string, Roles][] => [
  ...(legacy ? LEGACY : []),
  ['wildcard', () => [`identity.*.${action}`]],
  ['wildcard and more', () => [`identity.*.${action}`, randomUUID()]],
]
const specificIdentityRows = (action: string): [string, Roles][] => [
  ...identityRows(action),
  ['specific identityId', (_, identityId) => [`identity.${identityId}.${action}`]],
  ['specific identityId and more', (_, identityId) => [`identity.${identityId}.${action}`, randomUUID()]],
]

security(
  'identities_createIdentity.security',
  { request: async () => ({ method: 'POST', path: 'identities.createIdentity', body: { externalId: randomUUID() } }) },
  { group: 'correct roles', rows: identityRows('create_identity', true) },
)
security(
  'identities_deleteIdentity.security',
  identityRoute(
    'POST',
    () => 'identities.deleteIdentity',
    (identityId) => ({ identityId }),
  ),
  { group: 'correct permissions', rows: specificIdentityRows('delete_identity') },
)
security(
  'identities_getIdentity.security',
  identityRoute('GET', (identityId) => `identities.getIdentity?identityId=${identityId}`),
  { group: 'correct permissions', rows: specificIdentityRows('read_identity') },
)
security(
  'identities_listIdentities.security',
  identityRoute('GET', () => 'identities.listIdentities'),
  {
    group: 'correct permissions',
    // Unkey's "envId" is `default`, the environment every identity is in (Keygate's only one).
    rows: [
      ...LEGACY,
      ['wildcard api', () => ['identity.*.read_identity']],
      ['wildcard mixed', () => ['identity.*.read_identity', 'identity.default.identity']],
      ['wildcard mixed 2', () => ['identity.*.read_identity', 'identity.default.read_identity']],
      ['wildcard and more', () => ['identity.*.read_identity', randomUUID()]],
      ['specific envId', () => ['identity.default.read_identity']],
    ],
  },
)
// Unkey's updateIdentity security test sends keys.setPermissions (a copy of that file's): so does this one.
security(
  'identities_updateIdentity.security',
  {
    async request(h) {
      const { keyId } = await h.createKey()
      return {
        method: 'POST',
        path: 'keys.setPermissions',
        body: { keyId, permissions: [{ name: 'hello', create: true }] },
      }
    },
  },
  { group: 'correct permissions', rows: LEGACY },
)

for (const [name, externalId] of [
  ['empty externalId', ''],
  ['short externalId', 'ab'],
]) {
  // Unkey's message: `externalId: String must contain at least 3 character(s)`.
  deviation('identities_createIdentity.error', `${name} > reject`, VALIDATION_MESSAGE, async (h) => {
    expectError(await h.post('identities.createIdentity', { externalId }), 400, 'BAD_REQUEST', /^externalId: /)
  })
}
same(
  'identities_createIdentity.error',
  'when identity exists already > should return correct code and message',
  async (h) => {
    const { externalId } = await newIdentity(h)
    expectError(
      await h.post('identities.createIdentity', { externalId }),
      409,
      'CONFLICT',
      `Identity with externalId "${externalId}" already exists in this workspace`,
    )
  },
)
same('identities_createIdentity.happy', 'creates new identity', async (h) => {
  const answer = await h.post(
    'identities.createIdentity',
    { externalId: randomUUID() },
    await h.rootKey(['identity.*.create_identity']),
  )
  expectOk(answer)
  expect((await identityOf(h, answer.body.identityId)).id).toBe(answer.body.identityId)
})
same('identities_createIdentity.happy', 'with meta > stores metadata', async (h) => {
  const answer = await h.post(
    'identities.createIdentity',
    { externalId: randomUUID(), meta: { hello: 'world' } },
    await h.rootKey(['identity.*.create_identity']),
  )
  expectOk(answer)
  expect((await identityOf(h, answer.body.identityId)).meta).toMatchObject({ hello: 'world' })
})
same('identities_createIdentity.happy', 'with ratelimits > stores ratelimits', async (h) => {
  const ratelimits = [
    { name: 'tokens', limit: 10, duration: 1000 },
    { name: 'requests', limit: 1, duration: 60000 },
  ]
  const answer = await h.post(
    'identities.createIdentity',
    { externalId: randomUUID(), ratelimits },
    await h.rootKey(['identity.*.create_identity']),
  )
  expectOk(answer)
  const found = await identityOf(h, answer.body.identityId)
  expect(byName(limitFields(found.ratelimits))).toEqual(byName(ratelimits))
})

same('identities_deleteIdentity.error', 'identity does not exist', async (h) => {
  const identityId = newId('id')
  const answer = await h.post(
    'identities.deleteIdentity',
    { identityId },
    await h.rootKey(['identity.*.delete_identity']),
  )
  expectError(answer, 404, 'NOT_FOUND', `identity ${identityId} not found`)
})
same('identities_deleteIdentity.happy', 'deletes the identity', async (h) => {
  const { id } = await newIdentity(h)
  const answer = await h.post(
    'identities.deleteIdentity',
    { identityId: id },
    await h.rootKey([`identity.${id}.delete_identity`]),
  )
  expectOk(answer)
  expect(answer.body).toEqual({})
  expectError(await h.get(`identities.getIdentity?identityId=${id}`), 404, 'NOT_FOUND')
})

same('identities_getIdentity.error', 'identity does not exist', async (h) => {
  const identityId = newId('id')
  const answer = await h.get(
    `identities.getIdentity?identityId=${identityId}`,
    await h.rootKey(['identity.*.read_identity']),
  )
  expectError(answer, 404, 'NOT_FOUND', `identity ${identityId} not found`)
})
for (const [title, by] of [
  ['return the identity', 'identityId'],
  ['find the identity by its externalId', 'externalId'],
] as const) {
  same('identities_getIdentity.happy', title, async (h) => {
    const identity = await newIdentity(h)
    const query = by === 'identityId' ? `identityId=${identity.id}` : `externalId=${identity.externalId}`
    const answer = await h.get(`identities.getIdentity?${query}`, await h.rootKey(['identity.*.read_identity']))
    expectOk(answer)
    expect(answer.body).toMatchObject({ id: identity.id, externalId: identity.externalId })
  })
}
deviation(
  'identities_getIdentity.happy',
  'with ratelimits',
  "a limit's duration is at least 1000 ms (Unkey's test stores 100 in its database): this case gives 1000",
  async (h) => {
    const ratelimit = { name: randomUUID(), limit: 10, duration: 1000 }
    const identity = await newIdentity(h, { ratelimits: [ratelimit] })
    const answer = await h.get(
      `identities.getIdentity?identityId=${identity.id}`,
      await h.rootKey(['identity.*.read_identity']),
    )
    expectOk(answer)
    expect(answer.body).toMatchObject({ id: identity.id, externalId: identity.externalId })
    expect(limitFields(answer.body.ratelimits)).toEqual([ratelimit])
    expectError(
      await h.post('identities.createIdentity', {
        externalId: randomUUID(),
        ratelimits: [{ ...ratelimit, duration: 100 }],
      }),
      400,
      'BAD_REQUEST',
    )
  },
)

const listIdentities = async (h: Harness, query = '') =>
  h.get(`identities.listIdentities${query}`, await h.rootKey(['identity.*.read_identity']))
same('identities_listIdentities.happy', 'get identities', async (h) => {
  for (let i = 0; i < 10; i++) await newIdentity(h)
  const answer = await listIdentities(h)
  expectOk(answer)
  expect(answer.body.total).toBeGreaterThanOrEqual(10)
  expect(answer.body.identities.length).toBeGreaterThanOrEqual(10)
  expect(answer.body.identities.length).toBeLessThanOrEqual(100)
})
deviation(
  'identities_listIdentities.happy',
  'filter by environment',
  "every identity is in environment `default` (v1 cannot set one; Unkey's test writes them to its database): another environment lists none",
  async (h) => {
    for (let i = 0; i < 10; i++) await newIdentity(h)
    const answer = await listIdentities(h, `?environment=${randomUUID()}`)
    expectOk(answer)
    expect(answer.body).toMatchObject({ identities: [], total: 0 })
  },
)
same(
  'identities_listIdentities.happy',
  'returns ratelimits',
  isolated(async (h) => {
    const ratelimit = { name: randomUUID(), limit: 10, duration: 1000 }
    await newIdentity(h, { ratelimits: [ratelimit] })
    const answer = await listIdentities(h)
    expectOk(answer)
    expect(answer.body.identities).toHaveLength(1)
    expect(limitFields(answer.body.identities[0].ratelimits)).toEqual([ratelimit])
  }),
)
same('identities_listIdentities.happy', 'with limit', async (h) => {
  for (let i = 0; i < 10; i++) await newIdentity(h)
  const answer = await listIdentities(h, '?limit=2')
  expectOk(answer)
  expect(answer.body.total).toBeGreaterThanOrEqual(10)
  expect(answer.body.identities).toHaveLength(2)
})
same('identities_listIdentities.happy', 'with cursor', async (h) => {
  for (let i = 0; i < 10; i++) await newIdentity(h)
  const first = await listIdentities(h, '?limit=2')
  expectOk(first)
  expect(first.body.cursor).toBeDefined()
  const second = await listIdentities(h, `?limit=3&cursor=${first.body.cursor}`)
  expectOk(second)
  const ids = new Set([...first.body.identities, ...second.body.identities].map(({ id }: { id: string }) => id))
  expect(ids.size).toBe(5)
})

const updateIdentity = async (h: Harness, body: object) =>
  h.post('identities.updateIdentity', body, await h.rootKey(['identity.*.update_identity']))
same('identities_updateIdentity.error', 'empty identityId', async (h) => {
  await newIdentity(h)
  expectError(await updateIdentity(h, {}), 400, 'BAD_REQUEST', 'Provide either identityId or externalId')
})
same('identities_updateIdentity.error', 'updating ratelimits > duplicate ratelimits return an error', async (h) => {
  const { id } = await newIdentity(h)
  const name = 'requests'
  const answer = await updateIdentity(h, {
    identityId: id,
    ratelimits: [
      { name, limit: 10, duration: 20000 },
      { name, limit: 10, duration: 124124 },
    ],
  })
  expectError(answer, 409, 'CONFLICT', `Ratelimit with name "${name}" is already defined in the request`)
})
const twoLimits = () => [
  { name: randomUUID(), limit: 10, duration: 1000 },
  { name: randomUUID(), limit: 1000, duration: 11111111 },
]
const oldLimit = () => ({ name: randomUUID(), limit: 123123, duration: 131251 })
deviation(
  'identities_updateIdentity.happy',
  'can be identified via externalId',
  "every identity is in environment `default`: named by externalId with another `environment` (Unkey's test gives its identity one in its database), none is found (404)",
  async (h) => {
    const identity = await newIdentity(h, { ratelimits: [oldLimit()] })
    const answer = await updateIdentity(h, {
      externalId: identity.externalId,
      environment: randomUUID(),
      ratelimits: twoLimits(),
    })
    expectError(answer, 404, 'NOT_FOUND', `identity ${identity.externalId} not found`)
  },
)
same('identities_updateIdentity.happy', 'sets new ratelimits', async (h) => {
  const { id } = await newIdentity(h, { ratelimits: [oldLimit()] })
  const ratelimits = twoLimits()
  expectOk(await updateIdentity(h, { identityId: id, ratelimits }))
  expect(byName(limitFields((await identityOf(h, id)).ratelimits))).toEqual(byName(ratelimits))
})
same('identities_updateIdentity.happy', 'sets the same ratelimits again', async (h) => {
  const { id } = await newIdentity(h)
  const ratelimits = Array.from({ length: 6 }, (_, i) => ({
    name: randomUUID(),
    limit: 10 * (i + 1),
    duration: 1000 * (i + 1),
  }))
  for (let i = 0; i < 10; i++) {
    expectOk(await updateIdentity(h, { identityId: id, ratelimits }))
    expect(byName(limitFields((await identityOf(h, id)).ratelimits))).toEqual(byName(ratelimits))
  }
})
same('identities_updateIdentity.happy', 'works with thousands of keys', async (h) => {
  const identity = await newIdentity(h, { ratelimits: [oldLimit()] })
  const keyIds: string[] = []
  for (let i = 0; i < 1000; i++) keyIds.push((await h.createKey({ externalId: identity.externalId })).keyId)
  const ratelimits = Array.from({ length: 20 }, () => ({
    name: randomUUID(),
    limit: 10 + randomInt(100),
    duration: (1 + randomInt(1000)) * 1000,
  }))
  expectOk(await updateIdentity(h, { identityId: identity.id, ratelimits }))
  // A key's identity is read through getKey; the identity's limits through getIdentity (getKey shows no limits).
  expect(byName(limitFields((await identityOf(h, identity.id)).ratelimits))).toEqual(byName(ratelimits))
  for (const keyId of keyIds) expect((await read(h, keyId)).identity?.id).toBe(identity.id)
})
same('identities_updateIdentity.happy', 'updates meta', async (h) => {
  const { id } = await newIdentity(h)
  expectOk(await updateIdentity(h, { identityId: id, meta: { hello: 'world' } }))
  expect((await identityOf(h, id)).meta).toMatchObject({ hello: 'world' })
})
same('identities_updateIdentity.happy', 'updating meta does not affect ratelimits', async (h) => {
  const ratelimit = oldLimit()
  const { id } = await newIdentity(h, { ratelimits: [ratelimit] })
  expectOk(await updateIdentity(h, { identityId: id, meta: { x: 1 } }))
  const found = await identityOf(h, id)
  expect(found.ratelimits).toHaveLength(1)
  expect(found.ratelimits[0]).toMatchObject(ratelimit)
})

// ---------------------------------------------------------------------------------------------------------------
// ratelimits.*: Unkey's tests write namespaces and overrides to the database; here a namespace is made by a first
// ratelimits.limit call (h.namespace()) and overrides by ratelimits.setOverride, as the admin.

interface Override {
  identifier: string
  limit: number
  duration: number
  async?: boolean
}
async function setOverride(h: Harness, namespace: { id: string }, override: Override) {
  const answer = await h.post('ratelimits.setOverride', { namespaceId: namespace.id, ...override })
  expectOk(answer)
  return answer.body.overrideId as string
}
/** A namespace with one override (limit 1 a minute, not async), as Unkey's override tests start. */
async function namespaceWithOverride(h: Harness) {
  const namespace = await h.namespace()
  const identifier = randomUUID()
  const overrideId = await setOverride(h, namespace, { identifier, limit: 1, duration: 60_000, async: false })
  return { namespace, identifier, overrideId }
}
const getOverride = (h: Harness, namespaceId: string, identifier: string, rootKey?: string) =>
  h.get(`ratelimits.getOverride?namespaceId=${namespaceId}&identifier=${identifier}`, rootKey)

security(
  'ratelimits_deleteOverride.security',
  {
    async request(h) {
      const { namespace, identifier } = await namespaceWithOverride(h)
      return { method: 'POST', path: 'ratelimits.deleteOverride', body: { namespaceId: namespace.id, identifier } }
    },
  },
  { group: 'correct roles', rows: [['delete override', () => ['ratelimit.*.delete_override']]] },
)
same('ratelimits_deleteOverride.security', 'incorrect roles > delete override > returns 403', async (h) => {
  const { namespace, identifier, overrideId } = await namespaceWithOverride(h)
  const answer = await h.post(
    'ratelimits.deleteOverride',
    { namespaceId: namespace.id, identifier },
    await h.rootKey(['ratelimit.*.create_override']),
  )
  expect(answer.status).toBe(403)
  expect((await getOverride(h, namespace.id, identifier)).body.id).toBe(overrideId)
})
security(
  'ratelimits_getOverride.security',
  {
    async request(h) {
      const { namespace, identifier } = await namespaceWithOverride(h)
      return {
        method: 'GET',
        path: `ratelimits.getOverride?namespaceId=${namespace.id}&identifier=${identifier}`,
      }
    },
  },
  { group: 'correct roles', rows: [['get override', () => ['ratelimit.*.read_override']]] },
)
same('ratelimits_getOverride.security', 'incorrect roles > get override > returns 403', async (h) => {
  const { namespace, identifier } = await namespaceWithOverride(h)
  expect((await getOverride(h, namespace.id, identifier, await h.rootKey([]))).status).toBe(403)
})
security(
  'ratelimits_listOverrides.security',
  {
    async request(h) {
      const { namespace } = await namespaceWithOverride(h)
      return { method: 'GET', path: `ratelimits.listOverrides?namespaceId=${namespace.id}` }
    },
  },
  { group: 'correct roles', rows: [['list override', () => ['ratelimit.*.read_override']]] },
)
// Unkey's "incorrect roles" cases call getOverride, and hand its harness's createRootKey an options object where it
// takes a list of permissions: every one of the five root keys is made without permissions. So are these.
for (const name of [
  'no roles',
  'insufficient roles',
  'wrong namespace permissions',
  'expired token',
  'invalid token',
]) {
  same(
    'ratelimits_listOverrides.security',
    `incorrect roles > ${name} > returns appropriate status code`,
    async (h) => {
      const { namespace, identifier } = await namespaceWithOverride(h)
      expect((await getOverride(h, namespace.id, identifier, await h.rootKey([]))).status).toBe(403)
    },
  )
}
security(
  'ratelimits_setOverride.security',
  {
    async request(h) {
      const namespace = await h.namespace()
      const body = { namespaceId: namespace.id, identifier: randomUUID(), limit: 10, duration: 6500, async: true }
      return { method: 'POST', path: 'ratelimits.setOverride', body }
    },
  },
  { group: 'correct roles', rows: [] },
)
same('ratelimits_setOverride.security', 'correct roles > set override > returns 200', async (h) => {
  const namespace = await h.namespace()
  const identifier = randomUUID()
  const rootKey = await h.rootKey(['ratelimit.*.set_override'])
  const body = { namespaceId: namespace.id, identifier, duration: 60_000, async: false }
  const first = await h.post('ratelimits.setOverride', { ...body, limit: 1 }, rootKey)
  expectOk(first)
  expectOk(await h.post('ratelimits.setOverride', { ...body, limit: 7 }, rootKey))
  const found = await getOverride(h, namespace.id, identifier)
  expect(found.body).toMatchObject({ id: first.body.overrideId, limit: 7 })
})
for (const [name, roles] of [
  ['empty roles', []],
  ['invalid role', ['wrong.role']],
  ['insufficient role', ['ratelimit.*.view']],
] as const) {
  same('ratelimits_setOverride.security', `incorrect roles > ${name} > returns 403`, async (h) => {
    const namespace = await h.namespace()
    const identifier = randomUUID()
    const answer = await h.post(
      'ratelimits.setOverride',
      { namespaceId: namespace.id, identifier, limit: 1, duration: 60_000, async: false },
      await h.rootKey([...roles]),
    )
    expect(answer.status).toBe(403)
    expectError(await getOverride(h, namespace.id, identifier), 404, 'NOT_FOUND')
  })
}

const NO_NAMESPACE = 'You must provide a namespaceId or a namespaceName'
same('ratelimits_deleteOverride.error', 'Missing Namespace', async (h) => {
  const { identifier } = await namespaceWithOverride(h)
  const answer = await h.post(
    'ratelimits.deleteOverride',
    { identifier },
    await h.rootKey(['ratelimit.*.delete_override']),
  )
  expectError(answer, 400, 'BAD_REQUEST', NO_NAMESPACE)
})
same('ratelimits_deleteOverride.happy', 'deletes override', async (h) => {
  const { namespace, identifier } = await namespaceWithOverride(h)
  const answer = await h.post(
    'ratelimits.deleteOverride',
    { namespaceId: namespace.id, identifier },
    await h.rootKey(['ratelimit.*.delete_override']),
  )
  expectOk(answer)
  expectError(await getOverride(h, namespace.id, identifier), 404, 'NOT_FOUND')
})
same('ratelimits_getOverride.error', 'Missing Namespace', async (h) => {
  const { identifier } = await namespaceWithOverride(h)
  const answer = await h.get(
    `ratelimits.getOverride?namespaceId=&identifier=${identifier}`,
    await h.rootKey(['ratelimit.*.read_override']),
  )
  expectError(answer, 400, 'BAD_REQUEST', NO_NAMESPACE)
})
for (const [title, by] of [
  ['return a single override using namespaceId', 'namespaceId'],
  ['return a single override using namespaceName', 'namespaceName'],
] as const) {
  same('ratelimits_getOverride.happy', title, async (h) => {
    const { namespace, identifier, overrideId } = await namespaceWithOverride(h)
    const ref = by === 'namespaceId' ? `namespaceId=${namespace.id}` : `namespaceName=${namespace.name}`
    const answer = await h.get(
      `ratelimits.getOverride?${ref}&identifier=${identifier}`,
      await h.rootKey(['ratelimit.*.read_override']),
    )
    expectOk(answer)
    expect(answer.body).toMatchObject({ id: overrideId, identifier, limit: 1, duration: 60_000, async: false })
  })
}
same('ratelimits_listOverrides.error', 'Missing Namespace', async (h) => {
  const { identifier } = await namespaceWithOverride(h)
  const answer = await h.get(
    `ratelimits.listOverrides?identifier=${identifier}`,
    await h.rootKey(['ratelimit.*.read_override']),
  )
  expectError(answer, 400, 'BAD_REQUEST', NO_NAMESPACE)
})
const listOverrides = async (h: Harness, query: string) =>
  h.get(`ratelimits.listOverrides?${query}`, await h.rootKey(['ratelimit.*.read_override']))
same('ratelimits_listOverrides.happy', 'return multiple overrides for the same namespace', async (h) => {
  const namespace = await h.namespace()
  await setOverride(h, namespace, { identifier: randomUUID(), limit: 1, duration: 60_000, async: false })
  await setOverride(h, namespace, { identifier: randomUUID(), limit: 2, duration: 120_000, async: true })
  const answer = await listOverrides(h, `namespaceId=${namespace.id}`)
  expectOk(answer)
  expect(answer.body.total).toBe(2)
  expect(answer.body.overrides).toHaveLength(2)
})
for (const [title, extra] of [
  ['return empty list when no overrides exist', ''],
  // Unkey's test passes an identifier, which listOverrides does not take: it lists the namespace's (none).
  ['return empty list when none exist', `&identifier=${randomUUID()}`],
] as const) {
  same('ratelimits_listOverrides.happy', title, async (h) => {
    const namespace = await h.namespace()
    const answer = await listOverrides(h, `namespaceId=${namespace.id}${extra}`)
    expectOk(answer)
    expect(answer.body.total).toBe(0)
    expect(answer.body.overrides).toHaveLength(0)
  })
}
same('ratelimits_setOverride.error', 'Missing Namespace', async (h) => {
  const namespaceId = newId('rlns')
  const rootKey = await h.rootKey([
    '*',
    'ratelimit.*.set_Override',
    'ratelimit.*.create_namespace',
    'ratelimit.*.read_override',
  ])
  const answer = await h.post(
    'ratelimits.setOverride',
    { namespaceId, identifier: randomUUID(), limit: 10, duration: 6500, async: true },
    rootKey,
  )
  expectError(answer, 404, 'NOT_FOUND', `Namespace ${namespaceId} not found`)
})
// Unkey's message: `identifier: String must contain at least 3 character(s)`.
deviation('ratelimits_setOverride.error', 'Empty Identifier string', VALIDATION_MESSAGE, async (h) => {
  const namespace = await h.namespace()
  const rootKey = await h.rootKey([
    '*',
    'ratelimit.*.set_Override',
    'ratelimit.*.create_namespace',
    'ratelimit.*.read_override',
  ])
  const answer = await h.post(
    'ratelimits.setOverride',
    { namespaceId: namespace.id, identifier: '', limit: 10, duration: 6500, async: true },
    rootKey,
  )
  expectError(answer, 400, 'BAD_REQUEST', /^identifier: /)
})
same('ratelimits_setOverride.happy', 'Set ratelimit override', async (h) => {
  const namespace = await h.namespace()
  const identifier = randomUUID()
  const rootKey = await h.rootKey([
    '*',
    'ratelimit.*.set_override',
    'ratelimit.*.create_namespace',
    'ratelimit.*.read_override',
  ])
  const override = { namespaceId: namespace.id, identifier, limit: 10, async: true }
  expectOk(await h.post('ratelimits.setOverride', { ...override, duration: 6500 }, rootKey))
  expectOk(await getOverride(h, namespace.id, identifier))
  expectOk(await h.post('ratelimits.setOverride', { ...override, duration: 50000 }, rootKey))
  const found = await getOverride(h, namespace.id, identifier)
  expect(found.body).toMatchObject({ identifier, limit: 10, duration: 50000, async: true })
})

const limit = async (h: Harness, body: object) =>
  h.post('ratelimits.limit', { identifier: randomUUID(), ...body }, await h.rootKey(['ratelimit.*.limit']))
same('ratelimits_limit.happy', 'setting cost=0 returns the limit without modifying', async (h) => {
  const namespace = await h.namespace()
  const request = { identifier: randomUUID(), namespace: namespace.name, limit: 10, duration: 10000, async: false }
  for (let i = 0; i < 5; i++) {
    const answer = await limit(h, { ...request, cost: 0 })
    expectOk(answer)
    expect(answer.body.remaining).toBe(10)
  }
})
same('ratelimits_limit.overrides', 'without override > should use the hardcoded limit', async (h) => {
  const namespace = await h.namespace()
  const answer = await limit(h, { namespace: namespace.name, limit: 10, duration: 60_000 })
  expectOk(answer)
  expect(answer.body.limit).toBe(10)
})
same('ratelimits_limit.overrides', 'with serverside override > should use the override limit', async (h) => {
  const namespace = await h.namespace()
  const identifier = randomUUID()
  await setOverride(h, namespace, { identifier, limit: 20, duration: 60_000 })
  const answer = await limit(h, { identifier, namespace: namespace.name, limit: 10, duration: 60_000 })
  expectOk(answer)
  expect(answer.body.limit).toBe(20)
})
same(
  'ratelimits_limit.overrides',
  'with serverside override > wildcard identifier should use the override limit',
  async (h) => {
    const namespace = await h.namespace()
    const prefix = randomUUID()
    await setOverride(h, namespace, { identifier: `${prefix}*`, limit: 20, duration: 60_000 })
    const answer = await limit(h, {
      identifier: `${prefix}${randomUUID()}`,
      namespace: namespace.name,
      limit: 10,
      duration: 60_000,
    })
    expectOk(answer)
    expect(answer.body.limit).toBe(20)
  },
)
same(
  'ratelimits_limit.overrides',
  'with serverside override > exact override takes precedence over wildcard identifier',
  async (h) => {
    const namespace = await h.namespace()
    const prefix = randomUUID()
    const identifier = `${prefix}${randomUUID()}`
    await setOverride(h, namespace, { identifier: `${prefix}*`, limit: 30, duration: 60_000 })
    await setOverride(h, namespace, { identifier, limit: 20, duration: 60_000 })
    const answer = await limit(h, { identifier, namespace: namespace.name, limit: 10, duration: 60_000 })
    expectOk(answer)
    expect(answer.body.limit).toBe(20)
  },
)
for (let i = 1; i <= 5; i++) {
  na(
    'ratelimits_limit.accuracy',
    `name #${i}`,
    "a wall-clock load test (15 to 420 s at up to 300 requests a second), beyond this file's budget",
  )
}

// ---------------------------------------------------------------------------------------------------------------
// analytics.getVerifications

const HOUR = 60 * 60 * 1000
same('analytics_getVerifications.happy', 'with no data > returns an array with one element per interval', async (h) => {
  const end = clock.now()
  const start = end - 30 * HOUR
  const query = `start=${start}&end=${end}&groupBy=hour&apiId=${h.apiId}`
  const answer = await h.get(`analytics.getVerifications?${query}`, await h.rootKey(['api.*.read_api']))
  expectOk(answer)
  expect(answer.body).toHaveLength(Math.floor((end - start) / HOUR))
})
/** Verifications with tags, through the harness's verifier: two carry `a`, one of them `b` too, one `c`. */
async function taggedVerifications(h: Harness) {
  const { key } = await h.createKey()
  for (const tags of [['a', 'b'], ['a'], ['c']])
    expect((await h.verify({ key, apiId: h.apiId, tags })).status).toBe(200)
  await h.ingest()
  const range = `start=${clock.now() - 24 * HOUR}&end=${clock.now() + HOUR}`
  return async (query: string) => {
    const answer = await h.get(
      `analytics.getVerifications?apiId=${h.apiId}&${range}&${query}`,
      await h.rootKey(['api.*.read_api']),
    )
    expectOk(answer)
    return answer.body as any[]
  }
}
same('analytics_getVerifications.happy', 'filter by tag', async (h) => {
  const rows = await (await taggedVerifications(h))('tag=a')
  expect(rows).toHaveLength(1)
  expect(rows[0].total).toBe(2)
})
same('analytics_getVerifications.happy', 'filter by multiple tags', async (h) => {
  const rows = await (await taggedVerifications(h))('tag=a&tag=b')
  expect(rows[0].total).toBe(1)
})
same('analytics_getVerifications.happy', 'grouping by tags', async (h) => {
  const rows = await (await taggedVerifications(h))('groupBy=tags')
  expect(rows.map((row) => [row.tags, row.total]).sort()).toEqual(
    [
      [['a'], 1],
      [['a', 'b'], 1],
      [['c'], 1],
    ].sort(),
  )
})
same('analytics_getVerifications.happy', 'breakdown by tag', async (h) => {
  const rows = await (await taggedVerifications(h))('groupBy=tag')
  expect(Object.fromEntries(rows.map((row) => [row.tag, row.total]))).toEqual({ a: 2, b: 1, c: 1 })
})
const DAY = 24 * HOUR
/** Unkey's synthetic verifications: `count` of them over [start, end), keys and outcomes at random. */
function synthetic(keyIds: string[], start: number, end: number, count: number): Synthetic[] {
  const outcomes = ['VALID', 'RATE_LIMITED', 'DISABLED'] as const
  return Array.from({ length: count }, () => ({
    keyId: keyIds[randomInt(keyIds.length)]!,
    time: start + randomInt(end - start),
    outcome: outcomes[randomInt(outcomes.length)]!,
  }))
}
/** Every one of these verifications accounted for, by outcome, as Unkey's tests count them. */
function expectCounted(rows: any[], verifications: Synthetic[]) {
  const sum = (field: string) => rows.reduce((total, row) => total + (row[field] ?? 0), 0)
  const counted = (outcome: Synthetic['outcome']) => verifications.filter((v) => v.outcome === outcome).length
  expect(sum('total')).toBe(verifications.length)
  expect(sum('valid')).toBe(counted('VALID'))
  expect(sum('rateLimited')).toBe(counted('RATE_LIMITED'))
  expect(sum('disabled')).toBe(counted('DISABLED'))
  for (const field of ['notFound', 'forbidden', 'usageExceeded', 'unauthorized', 'expired', 'insufficientPermissions'])
    expect(sum(field)).toBe(0)
}
const analytics = async (h: Harness, query: Record<string, string | number | string[]>) => {
  const search = new URLSearchParams({ apiId: h.apiId })
  for (const [name, value] of Object.entries(query)) for (const one of [value].flat()) search.append(name, String(one))
  const answer = await h.get(`analytics.getVerifications?${search.toString()}`, await h.rootKey(['api.*.read_api']))
  expectOk(answer)
  return answer.body as any[]
}
for (const [granularity, generated, queried] of [
  ['hour', [5, 3], [6, 0]],
  ['day', [5, 3], [9, 0]],
  ['month', [25, 5], [28, 0]],
] as const) {
  same('analytics_getVerifications.happy', `per ${granularity} > all verifications are accounted for`, async (h) => {
    const now = clock.now()
    const keyIds = [(await h.createKey()).keyId, (await h.createKey()).keyId, (await h.createKey()).keyId]
    const verifications = synthetic(keyIds, now - generated[0] * DAY, now - generated[1] * DAY, 3000)
    await h.count(verifications)
    const rows = await analytics(h, {
      start: now - queried[0] * DAY,
      end: now - queried[1] * DAY,
      groupBy: granularity,
    })
    expectCounted(rows, verifications)
  })
}
/** Unkey's RFC scenarios start so: an identity with `owned` keys, and one key of no one. */
async function identityWithKeys(h: Harness, owned: number) {
  const identity = await newIdentity(h)
  const keys: string[] = []
  for (let i = 0; i < owned; i++) keys.push((await h.createKey({ externalId: identity.externalId })).keyId)
  const other = (await h.createKey()).keyId
  return { identity, keys, other }
}
same('analytics_getVerifications.happy', "RFC scenarios > a user's usage over the past 24h for 2 keys", async (h) => {
  const now = clock.now()
  const { identity, keys, other } = await identityWithKeys(h, 2)
  const verifications = synthetic([...keys, other], now - 12 * HOUR, now, 3000)
  await h.count(verifications)
  const rows = await analytics(h, {
    start: now - 24 * HOUR,
    end: now,
    externalId: identity.externalId,
    groupBy: 'hour',
  })
  expect(rows.length).toBeGreaterThanOrEqual(24)
  expect(rows.length).toBeLessThanOrEqual(25)
  expectCounted(
    rows,
    verifications.filter((v) => v.keyId !== other),
  )
})
same(
  'analytics_getVerifications.happy',
  'RFC scenarios > daily usage breakdown for a user per key in the current month',
  async (h) => {
    const now = clock.now()
    const { identity, keys, other } = await identityWithKeys(h, 3)
    const verifications = synthetic([...keys, other], now - 12 * HOUR, now, 3000)
    await h.count(verifications)
    const rows = await analytics(h, {
      start: now - 24 * HOUR,
      end: now,
      externalId: identity.externalId,
      groupBy: ['key', 'hour'],
    })
    for (const row of rows) expect(row.keyId).toBeDefined()
    expectCounted(
      rows,
      verifications.filter((v) => v.keyId !== other),
    )
    for (const keyId of keys) {
      expectCounted(
        rows.filter((row) => row.keyId === keyId),
        verifications.filter((v) => v.keyId === keyId),
      )
    }
  },
)
for (const [title, filter] of [
  ['filter by key', 1],
  ['filter by multiple keys', 2],
] as const) {
  same('analytics_getVerifications.happy', title, async (h) => {
    const now = clock.now()
    const { keys, other } = await identityWithKeys(h, 3)
    // Unkey's: 60 days of verifications, queried from the 2nd of this month 00:00 UTC for a month.
    const verifications = synthetic([...keys, other], now - 60 * DAY, now, 3000)
    await h.count(verifications)
    const from = new Date(now)
    from.setUTCDate(2)
    from.setUTCHours(0, 0, 0, 0)
    const start = from.getTime()
    const end = new Date(start).setUTCMonth(new Date(start).getUTCMonth() + 1)
    const named = keys.slice(0, filter)
    const rows = await analytics(h, { start, end, keyId: [...named] })
    expect(rows).toHaveLength(1)
    expectCounted(
      rows,
      verifications.filter((v) => named.includes(v.keyId) && Math.floor(v.time / HOUR) * HOUR >= start),
    )
  })
}
for (const title of [
  'RFC scenarios > A monthly cron job creates invoices for each identity',
  'RFC scenarios > a user sees a gauge with their quota, showing they used X out of Y API calls in the current billing period',
  'RFC scenarios > An internal dashboard shows the top 10 users by API usage over the past 30 days',
]) {
  todo(
    'analytics_getVerifications.happy',
    title,
    "Unkey's test writes 100,000 synthetic rows over months (of 100 identities for the top 10); Keygate counts every outcome, and the same scenario runs on fewer rows in test/integration/analytics-get-verifications.test.ts, not yet here as Unkey wrote it",
  )
}

// ---------------------------------------------------------------------------------------------------------------
// liveness

deviation(
  'liveness',
  'confirms services',
  'status is `ok` (Unkey\'s was the joke "we\'re so back"); services names the store',
  async (h) => {
    const answer = await h.get('liveness', null)
    expectOk(answer)
    expect(answer.body.status).toBe('ok')
  },
)

// ---------------------------------------------------------------------------------------------------------------
// Running the cases, checking the inventory, writing the report.

type InventoryTest = { file: string; title: string; status: string }
const TESTS = (inventory as { tests: InventoryTest[] }).tests
const results = new Map<string, 'passed' | 'failed-as-expected'>()

/** Every inventory test's verdict: its case, or the first rule that matches, or Unkey's own skip. */
function verdictOf(test: InventoryTest): { verdict: Verdict | undefined; reason?: string } {
  const entry = CASES.get(keyOf(test.file, test.title))
  if (entry) return entry
  if (test.status !== 'run') return { verdict: 'n/a', reason: `${test.status} in Unkey's own suite` }
  const rule = RULES.find((r) => r.file.test(test.file) && r.title.test(test.title))
  return rule ? { verdict: rule.verdict, reason: rule.reason } : { verdict: undefined }
}

describe("Unkey's v1 route tests, re-expressed", () => {
  for (const [key, entry] of CASES) {
    if (!entry.run) continue
    const run = entry.run
    if (entry.verdict === 'bug' || entry.verdict === 'missing') {
      it.fails(`${key} [${entry.verdict}]`, async () => {
        await run(await harness())
      })
      continue
    }
    it(`${key}${entry.verdict === 'deviation' ? ' [deviation]' : ''}`, async () => {
      await run(await harness())
      results.set(key, 'passed')
    })
  }
})

describe('the inventory', () => {
  it('gives every Unkey test exactly one verdict, and names no test Unkey does not have', () => {
    const known = new Set(TESTS.map((test) => keyOf(test.file, test.title)))
    expect(
      [...CASES.keys()].filter((key) => !known.has(key)),
      'cases that are no Unkey test',
    ).toEqual([])
    const without = TESTS.filter((test) => verdictOf(test).verdict === undefined)
    expect(
      without.map((test) => keyOf(test.file, test.title)),
      'Unkey tests without a verdict',
    ).toEqual([])
  })

  it('matches docs/unkey-v1-compatibility.md', () => {
    const runnable = [...CASES].filter(
      ([, entry]) => entry.run && entry.verdict !== 'bug' && entry.verdict !== 'missing',
    )
    if (runnable.some(([key]) => !results.has(key))) return // a filtered or failed run: nothing to compare
    const rows = TESTS.map((test) => ({ ...test, ...verdictOf(test) })) as (InventoryTest & {
      verdict: Verdict
      reason?: string
    })[]
    const doc = compatibilityDoc(rows)
    if (process.env.UNKEY_COMPAT_WRITE === '1') writeFileSync(DOC_PATH, doc)
    expect(readFileSync(DOC_PATH, 'utf8')).toBe(doc)
  })
})
