import { createHash, randomUUID } from 'node:crypto'
import { Unkey } from '@unkey/api'
import { Ratelimit } from '@unkey/ratelimit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startKeygate, type KeygateProcess } from '../support/processes.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'
import { clearOfWindowEdge } from '../support/window-edge.js'

/**
 * Unkey's current SDK (@unkey/api 2.x, pinned in package.json) and its rate-limit SDK (@unkey/ratelimit) driving
 * real Keygate processes — a control plane on a real Redis and a verifier sidecar beside it — by changing only
 * their server URL: the whole flow a team moving off Unkey runs. The SDKs check every answer with their own
 * schemas, so a field they would refuse fails here as it would fail a user.
 */
const MAX_STALENESS_MS = 2_000
const ADMIN_KEY = 'sdk-v2-test-root-key-0123456789'

let redis: RedisServer
let controlPlane: KeygateProcess
let verifier: KeygateProcess
/** The SDK as an admin, on the control plane. */
let admin: Unkey
/** The SDK with a root key that may only verify keys, on the verifier. */
let verifyOnly: Unkey
/** The SDK with a root key that may only rate-limit (in namespaces it may make), on the verifier. */
let limiter: Unkey

const sdk = (serverURL: string, rootKey: string) => new Unkey({ serverURL, rootKey, retryConfig: { strategy: 'none' } })

beforeAll(async () => {
  redis = await startRedisServer()
  const env = { REDIS_URL: redis.url, MAX_STALENESS_MS: String(MAX_STALENESS_MS), LOG_LEVEL: 'warn' }
  controlPlane = await startKeygate(['control-plane'], { ...env, KEYGATE_ROOT_KEY: ADMIN_KEY })
  verifier = await startKeygate(['verifier'], env)
  admin = sdk(controlPlane.url, ADMIN_KEY)
  verifyOnly = sdk(verifier.url, await rootKey(['api.*.verify_key']))
  limiter = sdk(verifier.url, await rootKey(['ratelimit.*.limit', 'ratelimit.*.create_namespace']))
}, 60_000)

/** A root key with these permissions, made through the control plane (which publishes it to verifiers). */
async function rootKey(permissions: string[]): Promise<string> {
  const created = await fetch(`${controlPlane.url}/v1/rootKeys.createRootKey`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ permissions }),
  })
  expect(created.status).toBe(200)
  return ((await created.json()) as { key: string }).key
}

afterAll(async () => {
  await verifier?.stop()
  await controlPlane?.stop()
  await redis?.stop()
})

/** Verifies on the verifier until `check` holds (a change reaches it within the bound). */
async function verifyUntil(key: string, check: (data: { valid: boolean; code: string }) => boolean, what: string) {
  const started = Date.now()
  await waitFor(async () => check((await verifyOnly.keys.verifyKey({ key })).data), what, MAX_STALENESS_MS + 1_000, 5)
  return Date.now() - started
}

describe("Unkey's SDK against Keygate", () => {
  let apiId: string

  it('creates an api and reads it back', async () => {
    apiId = (await admin.apis.createApi({ name: 'sdk-flow' })).data.apiId
    expect((await admin.apis.getApi({ apiId })).data).toEqual({ id: apiId, name: 'sdk-flow' })
  })

  it('creates a key with credits, a rate limit, permissions and a role; the verifier verifies it', async () => {
    await admin.permissions.createPermission({ name: 'documents.read', slug: 'documents.read' })
    await admin.permissions.createPermission({ name: 'documents.write', slug: 'documents.write' })
    await admin.permissions.createRole({ name: 'editor', permissions: ['documents.write'] })
    const { data } = await admin.keys.createKey({
      apiId,
      prefix: 'sdk',
      name: 'first key',
      externalId: 'acme',
      meta: { plan: 'pro' },
      credits: { remaining: 3 },
      ratelimits: [{ name: 'requests', limit: 100, duration: 60_000, autoApply: true }],
      permissions: ['documents.read'],
      roles: ['editor'],
    })
    expect(data.key).toMatch(/^sdk_/)
    const verified = await verifyOnly.keys.verifyKey({
      key: data.key,
      permissions: 'documents.read AND documents.write',
    })
    expect(verified.data).toMatchObject({
      valid: true,
      code: 'VALID',
      keyId: data.keyId,
      name: 'first key',
      meta: { plan: 'pro' },
      credits: 2,
      identity: { externalId: 'acme' },
    })
    expect(verified.data.permissions?.sort()).toEqual(['documents.read', 'documents.write'])
    expect(verified.data.roles).toEqual(['editor'])
    expect(verified.data.ratelimits?.[0]).toMatchObject({ name: 'requests', limit: 100, exceeded: false })
    // One limit, one id, whichever process and call shows it.
    const stored = (await admin.keys.getKey({ keyId: data.keyId })).data.ratelimits
    expect(stored?.map((limit) => limit.id)).toEqual([verified.data.ratelimits?.[0]?.id])
    const refused = await verifyOnly.keys.verifyKey({ key: data.key, permissions: 'admin' })
    expect(refused.data).toMatchObject({ valid: false, code: 'INSUFFICIENT_PERMISSIONS' })

    // Credits: set, then spent to nothing.
    await admin.keys.updateCredits({ keyId: data.keyId, operation: 'set', value: 1 })
    expect((await admin.keys.getKey({ keyId: data.keyId })).data.credits).toMatchObject({ remaining: 1 })
    await verifyUntil(data.key, (v) => v.valid, 'the credits set to reach the verifier')
    expect((await verifyOnly.keys.verifyKey({ key: data.key })).data.code).toBe('USAGE_EXCEEDED')
  })

  it('a disabled key is DISABLED on the verifier within the bound', async () => {
    const { data } = await admin.keys.createKey({ apiId, name: 'to disable' })
    expect((await verifyOnly.keys.verifyKey({ key: data.key })).data.valid).toBe(true)
    await admin.keys.updateKey({ keyId: data.keyId, enabled: false })
    const after = await verifyUntil(data.key, (v) => v.code === 'DISABLED', 'the key to be DISABLED')
    expect(after).toBeLessThanOrEqual(MAX_STALENESS_MS)
  })

  it('a root key without verify_key learns nothing of a key', async () => {
    const { data } = await admin.keys.createKey({ apiId })
    const readOnly = sdk(verifier.url, await rootKey(['api.*.read_api']))
    await waitFor(
      async () => {
        const answer = await readOnly.keys.verifyKey({ key: data.key }).catch(() => undefined)
        return answer !== undefined
      },
      'the new root key to reach the verifier',
      MAX_STALENESS_MS + 1_000,
      5,
    )
    expect((await readOnly.keys.verifyKey({ key: data.key })).data).toEqual({ valid: false, code: 'NOT_FOUND' })
    await expect(sdk(verifier.url, 'not-a-root-key').keys.verifyKey({ key: data.key })).rejects.toMatchObject({
      name: 'UnauthorizedErrorResponse',
    })
  })

  it('lists keys a page at a time, the SDK following the cursor to the end', async () => {
    const { data: api } = await admin.apis.createApi({ name: 'paged' })
    const ids: string[] = []
    for (let i = 0; i < 7; i++) ids.push((await admin.keys.createKey({ apiId: api.apiId, name: `k${i}` })).data.keyId)
    const seen: string[] = []
    let pages = 0
    for await (const page of await admin.apis.listKeys({ apiId: api.apiId, limit: 3 })) {
      pages++
      seen.push(...page.result.data.map((key) => key.keyId))
    }
    expect(pages).toBe(3)
    expect(seen.sort()).toEqual(ids.sort())
  })

  it('identities share a rate limit across their keys', async () => {
    const externalId = `user-${randomUUID()}`
    await admin.identities.createIdentity({
      externalId,
      ratelimits: [{ name: 'shared', limit: 3, duration: 60_000, autoApply: true }],
    })
    const keys = await Promise.all([1, 2].map(async () => (await admin.keys.createKey({ apiId, externalId })).data.key))
    const codes: string[] = []
    await clearOfWindowEdge(60_000)
    for (const key of [...keys, ...keys]) codes.push((await verifyOnly.keys.verifyKey({ key })).data.code)
    expect(codes).toEqual(['VALID', 'VALID', 'VALID', 'RATE_LIMITED'])
    const identity = await admin.identities.getIdentity({ identity: externalId })
    expect(identity.data).toMatchObject({ externalId, ratelimits: [{ name: 'shared', limit: 3, duration: 60_000 }] })
    const verified = await verifyOnly.keys.verifyKey({ key: keys[0]! })
    expect(verified.data.identity?.ratelimits?.[0]?.id).toBe(identity.data.ratelimits?.[0]?.id)
    expect(verified.data.ratelimits?.[0]?.id).toBe(identity.data.ratelimits?.[0]?.id)
  })

  it('ratelimit.limit on the verifier honours an override set on the control plane', async () => {
    const namespace = `ns-${randomUUID()}`
    const limit = () => limiter.ratelimit.limit({ namespace, identifier: 'vip', limit: 1, duration: 60_000 })
    await clearOfWindowEdge(60_000)
    expect((await limit()).data.success).toBe(true)
    expect((await limit()).data.success).toBe(false)
    await admin.ratelimit.setOverride({ namespace, identifier: 'vip', limit: 10, duration: 60_000 })
    expect((await admin.ratelimit.getOverride({ namespace, identifier: 'vip' })).data).toMatchObject({ limit: 10 })
    // Waits on the limit the answer names: a call let through would also come from a new minute's window.
    await waitFor(
      async () => (await limit()).data.limit === 10,
      'the override to reach the verifier',
      MAX_STALENESS_MS + 1_000,
      5,
    )
    const multi = await limiter.ratelimit.multiLimit([
      { namespace, identifier: 'a', limit: 1, duration: 60_000 },
      { namespace, identifier: 'b', limit: 1, duration: 60_000 },
    ])
    expect(multi.data.passed).toBe(true)
  })

  it('@unkey/ratelimit limits against the verifier and the control plane alike', async () => {
    // As on Unkey: limiting in a namespace not made yet needs create_namespace too.
    const limits = await rootKey(['ratelimit.*.limit', 'ratelimit.*.create_namespace'])
    for (const [baseUrl, key] of [
      [verifier.url, limits],
      [controlPlane.url, limits],
    ] as const) {
      const limiter = new Ratelimit({
        baseUrl,
        rootKey: key,
        namespace: `rl-${randomUUID()}`,
        limit: 2,
        duration: '60s',
        onError: (err) => {
          throw err
        },
      })
      await waitFor(
        async () => (await limiter.limit('probe').catch(() => undefined)) !== undefined,
        'the root key to reach the process',
        MAX_STALENESS_MS + 1_000,
        5,
      )
      await clearOfWindowEdge(60_000)
      const answers = [await limiter.limit('user'), await limiter.limit('user'), await limiter.limit('user')]
      expect(answers.map((a) => a.success)).toEqual([true, true, false])
      expect(answers[0]).toMatchObject({ limit: 2, remaining: 1 })
    }
  })

  it('rerolls a key (the old one expires after its grace), answers whoami, deletes a key', async () => {
    const { data: first } = await admin.keys.createKey({ apiId, name: 'to reroll' })
    const { data: rolled } = await admin.keys.rerollKey({ keyId: first.keyId, expiration: 0 })
    expect(rolled.keyId).not.toBe(first.keyId)
    await verifyUntil(first.key, (v) => !v.valid, 'the rerolled key to stop verifying')
    expect((await verifyOnly.keys.verifyKey({ key: rolled.key })).data.valid).toBe(true)
    const whoami = await admin.keys.whoami({ key: rolled.key })
    expect(whoami.data).toMatchObject({ keyId: rolled.keyId, name: 'to reroll', enabled: true })
    await admin.keys.deleteKey({ keyId: rolled.keyId })
    await verifyUntil(rolled.key, (v) => v.code === 'NOT_FOUND', 'the deleted key to be NOT_FOUND')
    await expect(admin.keys.getKey({ keyId: rolled.keyId })).rejects.toMatchObject({ name: 'NotFoundErrorResponse' })
  })

  it('migrates keys by their hashes; a hash already present is reported, not stored twice', async () => {
    const plaintext = `legacy_${randomUUID()}`
    const hash = createHash('sha256').update(plaintext).digest('base64')
    const migrated = await admin.keys.migrateKeys({
      migrationId: 'sha256',
      apiId,
      keys: [{ hash, name: 'from elsewhere' }],
    })
    expect(migrated.data.migrated).toEqual([{ hash, keyId: expect.stringMatching(/^key_/) }])
    expect(migrated.data.failed).toEqual([])
    const again = await admin.keys.migrateKeys({ migrationId: 'sha256', apiId, keys: [{ hash }] })
    expect(again.data).toEqual({ migrated: [], failed: [hash] })
    expect((await verifyOnly.keys.verifyKey({ key: plaintext })).data).toMatchObject({
      valid: true,
      keyId: migrated.data.migrated[0]!.keyId,
    })
  })

  it("drives the customer portal through the SDK's portal.*: session, code, keys, reroll, verifications", async () => {
    const portalApi = (await admin.apis.createApi({ name: 'sdk-portal' })).data.apiId
    const made = await fetch(`${controlPlane.url}/v2/portal.createPortal`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ slug: 'sdk-portal', name: 'SDK portal', apiIds: [portalApi] }),
    })
    expect(made.status).toBe(200)
    const { data: owned } = await admin.keys.createKey({ apiId: portalApi, externalId: 'sdk_customer' })
    await admin.keys.createKey({ apiId: portalApi, externalId: 'someone_else' })
    const minted = await admin.portal.createSession({
      portal: 'sdk-portal',
      externalId: 'sdk_customer',
      scopes: ['keys:read', 'keys:reroll', 'analytics:read'],
      returnUrl: 'https://app.example/settings',
    })
    // The SDK answers these two with the headers beside the body (Unkey sends no-store).
    expect(minted.headers['cache-control']).toEqual(['no-store'])
    const session = minted.result.data
    expect(session.id).toMatch(/^ps_/)
    const code = new URL(session.url).searchParams.get('code')!
    const token = (await admin.portal.exchangeCode({ code })).result.data
    await expect(admin.portal.exchangeCode({ code })).rejects.toMatchObject({ statusCode: 401 })
    const security = { portalSession: token.accessToken }
    const page = await admin.portal.listKeys(security, {})
    expect(page.result.data.map((key) => key.keyId)).toEqual([owned.keyId])
    const rolled = await admin.portal.rerollKey(security, { keyId: owned.keyId, expiration: 60_000 })
    expect(rolled.data.keyId).not.toBe(owned.keyId)
    expect((await verifyOnly.keys.verifyKey({ key: owned.key })).data.valid).toBe(true)
    await verifyUntil(rolled.data.key, (v) => v.valid, 'the rolled key to verify')
    const now = Date.now()
    const usage = await admin.portal.getVerifications(security, { startTime: now - 3_600_000, endTime: now + 60_000 })
    expect(Array.isArray(usage.data)).toBe(true)
  })
})
