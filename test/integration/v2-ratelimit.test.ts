import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Overrides, Ratelimit } from '@unkey/ratelimit'
import type { KeygateServer } from '../../shared/http/keygate-server.js'
import { ManualClock, TEST_ROOT_KEY, type TestServer } from '../support/apps.js'
import { ADMIN_HEADERS, JSON_ONLY, onBothStores } from '../support/both-stores.js'
import { namespaceOf as storedNamespace, rootKeyWith } from '../support/ratelimits.js'
import { unkeySdk } from '../support/unkey-sdk.js'
import { waitFor } from '../support/wait-for.js'

/**
 * Unkey v2's ratelimit.* (its v2_ratelimit_* Go tests, re-expressed): limit and multiLimit on the control plane
 * and through the verifier's registration, overrides set, read, listed and deleted, checked by Unkey's SDK and by
 * @unkey/ratelimit over a real port.
 */

const START = Date.UTC(2026, 10, 22, 12, 0, 0)

onBothStores('v2 ratelimit.*', { clock: () => new ManualClock(START) }, (stack) => {
  const clock = stack.clock!
  beforeEach(() => {
    clock.ms = START
  })
  const sdk = () => unkeySdk(stack.controlPlane, TEST_ROOT_KEY)
  const as = (permissions: string[]) => rootKeyWith(stack.backend, permissions)
  const namespaceOf = (name: string) => storedNamespace(stack.backend, name)
  const post = async (
    operation: string,
    payload: unknown,
    headers: Record<string, string> = ADMIN_HEADERS,
    server: TestServer | { app: KeygateServer } = stack.controlPlane,
  ) => {
    const response = await server.app.inject({
      method: 'POST',
      url: `/v2/${operation}`,
      headers,
      payload: payload as object,
    })
    return { status: response.statusCode, body: response.json() }
  }
  const fresh = () => `ns-${randomUUID()}`
  /** A namespace made by a first limit call, and its id. */
  const made = async () => {
    const name = fresh()
    await sdk().ratelimit.limit({ namespace: name, identifier: 'warm-up', limit: 1, duration: 1_000 })
    return { name, id: (await namespaceOf(name))!.id }
  }

  describe('ratelimit.limit', () => {
    it('lets `limit` units through per window, then refuses until the window ends; the namespace made on first use', async () => {
      const namespace = fresh()
      const call = { namespace, identifier: 'user_1', limit: 3, duration: 10_000 }
      const reset = START + 10_000
      for (const remaining of [2, 1, 0]) {
        const answer = await sdk().ratelimit.limit(call)
        expect(answer.meta.requestId).toMatch(/^req_/)
        expect(answer.data).toEqual({ success: true, limit: 3, remaining, reset })
      }
      expect((await sdk().ratelimit.limit(call)).data).toEqual({ success: false, limit: 3, remaining: 0, reset })
      clock.advance(10_000)
      expect((await sdk().ratelimit.limit({ ...call, cost: 2 })).data).toMatchObject({ success: true, remaining: 1 })
      const record = await namespaceOf(namespace)
      expect(record).toMatchObject({ name: namespace })
      const audit = await stack.controlPlane.app.inject({
        method: 'GET',
        url: '/v1/audit.list',
        headers: ADMIN_HEADERS,
      })
      expect(audit.json().entries).toContainEqual(
        expect.objectContaining({ action: 'ratelimits.createNamespace', after: { id: record!.id, name: namespace } }),
      )
    })

    it('names a namespace by name or id, one window either way, shared with v1 and with the verifier', async () => {
      const { name, id } = await made()
      const call = { identifier: 'shared', limit: 4, duration: 60_000 }
      expect((await sdk().ratelimit.limit({ namespace: name, ...call })).data.remaining).toBe(3)
      expect((await sdk().ratelimit.limit({ namespace: id, ...call })).data.remaining).toBe(2)
      const v1 = await stack.post('ratelimits.limit', { namespace: name, ...call }, stack.verifier, JSON_ONLY)
      expect(v1.body).toMatchObject({ success: true, remaining: 1 })
      // The id names no namespace record of its own: the first call made none.
      expect(await namespaceOf(id)).toBeNull()
    })

    it('applies an override (its limit, its window, its id), wildcards too', async () => {
      const { name } = await made()
      const identifier = `vip-${randomUUID()}`
      const { overrideId } = (
        await sdk().ratelimit.setOverride({ namespace: name, identifier, limit: 2, duration: 20_000 })
      ).data
      const pattern = (
        await sdk().ratelimit.setOverride({ namespace: name, identifier: 'team_*', limit: 5, duration: 60_000 })
      ).data.overrideId
      const call = { namespace: name, identifier, limit: 100, duration: 60_000 }
      expect((await sdk().ratelimit.limit(call)).data).toEqual({
        success: true,
        limit: 2,
        remaining: 1,
        reset: START + 20_000,
        overrideId,
      })
      await sdk().ratelimit.limit(call)
      expect((await sdk().ratelimit.limit(call)).data).toMatchObject({ success: false, overrideId })
      expect((await sdk().ratelimit.limit({ ...call, identifier: 'team_a' })).data).toMatchObject({
        limit: 5,
        remaining: 4,
        overrideId: pattern,
      })
      await sdk().ratelimit.deleteOverride({ namespace: name, identifier })
      const after = (await sdk().ratelimit.limit(call)).data
      expect(after).toMatchObject({ success: true, limit: 100, remaining: 99 })
      expect(after.overrideId).toBeUndefined()
    })

    it('refuses malformed calls with 400 naming the field', async () => {
      const good = { namespace: 'n', identifier: 'i', limit: 1, duration: 1_000 }
      for (const [bad, location] of [
        [{ ...good, cost: -1 }, 'body.cost'],
        [{ ...good, duration: 999 }, 'body.duration'],
        [{ ...good, duration: 30 * 86_400_000 + 1 }, 'body.duration'],
        [{ ...good, namespace: '' }, 'body.namespace'],
        [{ ...good, identifier: 'x'.repeat(513) }, 'body.identifier'],
        [{ ...good, limit: 1.5 }, 'body.limit'],
        // v1's `async` is no field of v2's.
        [{ ...good, async: true }, 'body.async'],
        [{ identifier: 'i', limit: 1, duration: 1_000 }, 'body.namespace'],
      ] as const) {
        const answer = await post('ratelimit.limit', bad)
        expect(answer.status, JSON.stringify(bad)).toBe(400)
        expect(answer.body.error).toMatchObject({
          status: 400,
          type: 'https://unkey.com/docs/errors/unkey/application/invalid_input',
          errors: [expect.objectContaining({ location })],
        })
      }
      await expect(sdk().ratelimit.limit({ ...good, cost: -1 })).rejects.toMatchObject({
        name: 'BadRequestErrorResponse',
      })
    })

    it('needs a root key: 400 without one, 401 for an unknown one', async () => {
      const call = { namespace: fresh(), identifier: 'i', limit: 1, duration: 1_000 }
      const missing = await post('ratelimit.limit', call, JSON_ONLY)
      expect(missing).toMatchObject({ status: 400, body: { error: { type: expect.stringMatching(/missing$/) } } })
      await expect(unkeySdk(stack.controlPlane, 'nope').ratelimit.limit(call)).rejects.toMatchObject({
        name: 'UnauthorizedErrorResponse',
      })
    })

    it('needs ratelimit.<namespaceId|*>.limit, and ratelimit.*.create_namespace for a new namespace (403, none made)', async () => {
      const name = fresh()
      const call = { namespace: name, identifier: 'x', limit: 5, duration: 60_000 }
      const limitOnly = await as(['ratelimit.*.limit'])
      const refused = await post('ratelimit.limit', call, limitOnly)
      expect(refused).toMatchObject({
        status: 403,
        body: { error: { title: 'Insufficient Permissions', status: 403 } },
      })
      expect(refused.body.error.detail).toContain('create_namespace')
      expect((await post('ratelimit.limit', call, await as(['ratelimit.*.create_namespace']))).status).toBe(403)
      expect(await namespaceOf(name)).toBeNull()
      const both = await as(['ratelimit.*.limit', 'ratelimit.*.create_namespace'])
      expect((await post('ratelimit.limit', call, both)).status).toBe(200)
      const { id } = (await namespaceOf(name))!
      expect((await post('ratelimit.limit', call, limitOnly)).status).toBe(200)
      expect((await post('ratelimit.limit', call, await as([`ratelimit.${id}.limit`]))).status).toBe(200)
      expect(
        (await post('ratelimit.limit', { ...call, namespace: id }, await as([`ratelimit.${id}.limit`]))).status,
      ).toBe(200)
      const other = await as(['ratelimit.rlns_other.limit', `ratelimit.${id}.set_override`])
      await expect(
        unkeySdk(stack.controlPlane, other.authorization!.slice('Bearer '.length)).ratelimit.limit(call),
      ).rejects.toMatchObject({ name: 'ForbiddenErrorResponse', data$: { error: { status: 403 } } })
    })
  })

  describe('ratelimit.multiLimit', () => {
    it('checks every limit; charges them all only when each has room (all or nothing)', async () => {
      const [a, b, c] = [fresh(), fresh(), fresh()]
      const identifier = randomUUID()
      const checks = [
        { namespace: a, identifier, limit: 100, duration: 60_000 },
        { namespace: b, identifier, limit: 1, duration: 60_000 },
        { namespace: c, identifier, limit: 300, duration: 60_000, cost: 10 },
      ]
      const first = (await sdk().ratelimit.multiLimit(checks)).data
      expect(first).toEqual({
        passed: true,
        limits: [
          { namespace: a, identifier, limit: 100, remaining: 99, reset: START + 60_000, passed: true },
          { namespace: b, identifier, limit: 1, remaining: 0, reset: START + 60_000, passed: true },
          { namespace: c, identifier, limit: 300, remaining: 290, reset: START + 60_000, passed: true },
        ],
      })
      // b has no room left: every result is answered, none is charged.
      const second = (await sdk().ratelimit.multiLimit(checks)).data
      expect(second.passed).toBe(false)
      expect(second.limits.map((check) => [check.namespace, check.passed, check.remaining])).toEqual([
        [a, true, 99],
        [b, false, 0],
        [c, true, 290],
      ])
      const probe = async (namespace: string) =>
        (await sdk().ratelimit.limit({ namespace, identifier, limit: 100, duration: 60_000, cost: 0 })).data.remaining
      expect(await probe(a)).toBe(99)
      const cRemaining = (
        await sdk().ratelimit.limit({ namespace: c, identifier, limit: 300, duration: 60_000, cost: 0 })
      ).data.remaining
      expect(cRemaining).toBe(290)
      // Without b, the others are charged again.
      const third = (await sdk().ratelimit.multiLimit([checks[0]!, checks[2]!])).data
      expect(third.limits.map((check) => check.remaining)).toEqual([98, 280])
      expect(await probe(a)).toBe(98)
    })

    it('applies overrides per namespace, answers each check’s override id and the namespace as named', async () => {
      const one = await made()
      const two = await made()
      const identifier = randomUUID()
      const first = (await sdk().ratelimit.setOverride({ namespace: one.id, identifier, limit: 5, duration: 60_000 }))
        .data.overrideId
      const answer = (
        await sdk().ratelimit.multiLimit([
          { namespace: one.id, identifier, limit: 100, duration: 60_000 },
          { namespace: two.name, identifier, limit: 3, duration: 60_000 },
        ])
      ).data
      expect(answer.limits).toEqual([
        {
          namespace: one.id,
          identifier,
          limit: 5,
          remaining: 4,
          reset: START + 60_000,
          passed: true,
          overrideId: first,
        },
        { namespace: two.name, identifier, limit: 3, remaining: 2, reset: START + 60_000, passed: true },
      ])
    })

    it('the same window named twice counts both checks, and a refusal charges neither', async () => {
      const namespace = fresh()
      const check = { namespace, identifier: 'twice', limit: 3, duration: 60_000, cost: 2 }
      const answer = (await sdk().ratelimit.multiLimit([check, check])).data
      expect(answer.passed).toBe(false)
      expect(answer.limits.map((limit) => limit.passed)).toEqual([true, false])
      expect((await sdk().ratelimit.limit({ ...check, cost: 0 })).data.remaining).toBe(3)
    })

    it('all or nothing for a window counted async too (an override set async through v1)', async () => {
      const { name } = await made()
      const identifier = randomUUID()
      const set = { namespaceName: name, identifier, limit: 5, duration: 60_000, async: true }
      expect((await stack.post('ratelimits.setOverride', set)).status).toBe(200)
      const full = { namespace: fresh(), identifier, limit: 1, duration: 60_000 }
      await sdk().ratelimit.limit(full)
      const asyncCheck = { namespace: name, identifier, limit: 100, duration: 60_000 }
      const refused = (await sdk().ratelimit.multiLimit([asyncCheck, full])).data
      expect(refused.limits.map((check) => [check.passed, check.limit, check.remaining])).toEqual([
        [true, 5, 5],
        [false, 1, 0],
      ])
      expect((await sdk().ratelimit.limit({ ...asyncCheck, cost: 0 })).data.remaining).toBe(5)
      const passed = (await sdk().ratelimit.multiLimit([asyncCheck, asyncCheck])).data
      expect(passed.limits.map((check) => check.remaining)).toEqual([4, 3])
      expect((await sdk().ratelimit.limit({ ...asyncCheck, cost: 0 })).data.remaining).toBe(3)
    })

    it('400 for an empty list or a malformed check; 403 unless the root key may limit every namespace', async () => {
      expect((await post('ratelimit.multiLimit', [])).body.error).toMatchObject({
        status: 400,
        errors: [{ location: 'body', message: 'must not be empty' }],
      })
      const bad = await post('ratelimit.multiLimit', [{ namespace: '', identifier: 'i', limit: 1, duration: 1_000 }])
      expect(bad).toMatchObject({ status: 400, body: { error: { errors: [{ location: 'body.0.namespace' }] } } })
      expect((await post('ratelimit.multiLimit', { namespace: 'n' })).status).toBe(400)
      const a = await made()
      const b = await made()
      const onlyA = await as([`ratelimit.${a.id}.limit`])
      const checks = [a, b].map(({ name }) => ({ namespace: name, identifier: 'i', limit: 5, duration: 60_000 }))
      const refused = await post('ratelimit.multiLimit', checks, onlyA)
      expect(refused).toMatchObject({ status: 403 })
      // The refusal names the right, not the namespace's id (the caller named it by name).
      expect(refused.body.error.detail).toContain('ratelimit.<the namespace>.limit')
      expect(refused.body.error.detail).not.toContain(b.id)
      expect((await post('ratelimit.multiLimit', checks.slice(0, 1), onlyA)).status).toBe(200)
      // A new namespace among them: create_namespace, checked before anything is made or counted.
      const name = fresh()
      const withNew = [...checks, { namespace: name, identifier: 'i', limit: 5, duration: 60_000 }]
      const noCreate = await post('ratelimit.multiLimit', withNew, await as(['ratelimit.*.limit']))
      expect(noCreate.status).toBe(403)
      expect(noCreate.body.error.detail).toContain('create_namespace')
      expect(await namespaceOf(name)).toBeNull()
      expect((await post('ratelimit.multiLimit', withNew)).body.data.passed).toBe(true)
      expect(await namespaceOf(name)).toMatchObject({ name })
    })
  })

  describe('overrides', () => {
    it('sets (by name or id, the same id when changed), reads, lists page by page and deletes', async () => {
      const { name, id } = await made()
      const set = (namespace: string, identifier: string, limit: number) =>
        sdk().ratelimit.setOverride({ namespace, identifier, limit, duration: 60_000 })
      const a = (await set(name, 'user_a', 10)).data.overrideId
      expect(a).toMatch(/^rlor_/)
      expect((await set(id, 'user_a', 20)).data.overrideId).toBe(a)
      const b = (await set(id, 'user_b', 0)).data.overrideId
      const pattern = (await set(name, 'user_*', 7)).data.overrideId
      expect((await sdk().ratelimit.getOverride({ namespace: id, identifier: 'user_a' })).data).toEqual({
        overrideId: a,
        identifier: 'user_a',
        limit: 20,
        duration: 60_000,
      })
      // An identifier without one of its own: the pattern that applies to it (Unkey's getOverride matches too).
      expect((await sdk().ratelimit.getOverride({ namespace: name, identifier: 'user_zed' })).data.overrideId).toBe(
        pattern,
      )
      const pages: string[][] = []
      for await (const page of await sdk().ratelimit.listOverrides({ namespace: name, limit: 2 }))
        pages.push(page.result.data.map((override) => override.overrideId))
      expect(pages.flat()).toEqual([a, b, pattern])
      expect(pages[0]).toHaveLength(2)
      const last = await post('ratelimit.listOverrides', { namespace: id, limit: 10 })
      expect(last.body.pagination).toEqual({ hasMore: false })
      expect(last.body.data).toHaveLength(3)
      expect((await sdk().ratelimit.deleteOverride({ namespace: id, identifier: 'user_a' })).data).toEqual({})
      const gone = await post('ratelimit.getOverride', { namespace: name, identifier: 'user_a' })
      // The pattern still applies to user_a.
      expect(gone.body.data.overrideId).toBe(pattern)
      await expect(sdk().ratelimit.deleteOverride({ namespace: id, identifier: 'user_a' })).rejects.toMatchObject({
        name: 'NotFoundErrorResponse',
        data$: { error: { type: 'https://unkey.com/docs/errors/unkey/data/ratelimit_override_not_found' } },
      })
    })

    it('listOverrides: a full last page carries no cursor, so the SDK asks for no empty page', async () => {
      const { name } = await made()
      for (const identifier of ['user_a', 'user_b'])
        await sdk().ratelimit.setOverride({ namespace: name, identifier, limit: 1, duration: 60_000 })
      const full = await post('ratelimit.listOverrides', { namespace: name, limit: 2 })
      expect(full.body.pagination).toEqual({ hasMore: false })
      const pages: number[] = []
      for await (const page of await sdk().ratelimit.listOverrides({ namespace: name, limit: 1 }))
        pages.push(page.result.data.length)
      expect(pages).toEqual([1, 1])
    })

    it('keeps an override’s v1 `async` when v2 changes it, and audits v2’s writes as v1’s', async () => {
      const { name } = await made()
      expect(
        (
          await stack.post('ratelimits.setOverride', {
            namespaceName: name,
            identifier: 'async-one',
            limit: 3,
            duration: 60_000,
            async: true,
          })
        ).status,
      ).toBe(200)
      await sdk().ratelimit.setOverride({ namespace: name, identifier: 'async-one', limit: 4, duration: 60_000 })
      const v1 = await stack.controlPlane.app.inject({
        method: 'GET',
        url: `/v1/ratelimits.getOverride?namespaceName=${name}&identifier=async-one`,
        headers: ADMIN_HEADERS,
      })
      expect(v1.json()).toMatchObject({ limit: 4, async: true })
      const audit = await stack.controlPlane.app.inject({
        method: 'GET',
        url: '/v1/audit.list?limit=1',
        headers: ADMIN_HEADERS,
      })
      expect(audit.json().entries[0]).toMatchObject({
        action: 'ratelimits.setOverride',
        before: { limit: 3 },
        after: { limit: 4, async: true },
      })
    })

    it('404 for a namespace not made or an override not set; setOverride makes a namespace only with create_namespace', async () => {
      const name = fresh()
      const setOnly = await as(['ratelimit.*.set_override'])
      const set = { namespace: name, identifier: 'x', limit: 1, duration: 1_000 }
      expect(await post('ratelimit.setOverride', set, setOnly)).toMatchObject({
        status: 404,
        body: { error: { type: 'https://unkey.com/docs/errors/unkey/data/ratelimit_namespace_not_found' } },
      })
      // An id is never taken for a name to make.
      const unknownId = { ...set, namespace: 'rlns_1CX8vvRBhstWqpZHNqeFeX' }
      expect((await post('ratelimit.setOverride', unknownId)).status).toBe(404)
      for (const [operation, payload] of [
        ['ratelimit.getOverride', { namespace: name, identifier: 'x' }],
        ['ratelimit.listOverrides', { namespace: name }],
        ['ratelimit.deleteOverride', { namespace: 'rlns_1CX8vvRBhstWqpZHNqeFeX', identifier: 'x' }],
      ] as const) {
        expect(await post(operation, payload), operation).toMatchObject({
          status: 404,
          body: { error: { type: 'https://unkey.com/docs/errors/unkey/data/ratelimit_namespace_not_found' } },
        })
      }
      expect(await namespaceOf(name)).toBeNull()
      // As v1's: a Keygate verifier counts a namespace without making it, so the first override may make it.
      expect((await post('ratelimit.setOverride', set)).status).toBe(200)
      expect(await namespaceOf(name)).toMatchObject({ name })
      const { id } = await made()
      await expect(sdk().ratelimit.getOverride({ namespace: id, identifier: 'nobody' })).rejects.toMatchObject({
        name: 'NotFoundErrorResponse',
        data$: { error: { type: 'https://unkey.com/docs/errors/unkey/data/ratelimit_override_not_found' } },
      })
    })

    it('400 for malformed calls', async () => {
      for (const [operation, payload, location] of [
        ['ratelimit.setOverride', { namespace: 'n', identifier: 'x', limit: -1, duration: 1_000 }, 'body.limit'],
        ['ratelimit.setOverride', { namespace: 'n', identifier: 'x', limit: 1 }, 'body.duration'],
        ['ratelimit.setOverride', { namespace: 'n', identifier: '', limit: 1, duration: 1_000 }, 'body.identifier'],
        [
          'ratelimit.setOverride',
          { namespace: 'n', identifier: 'x', limit: 1, duration: 1_000, async: true },
          'body.async',
        ],
        ['ratelimit.getOverride', { namespace: 'n' }, 'body.identifier'],
        ['ratelimit.listOverrides', { namespace: '' }, 'body.namespace'],
        ['ratelimit.listOverrides', { namespace: 'n', limit: 101 }, 'body.limit'],
        ['ratelimit.deleteOverride', { identifier: 'x' }, 'body.namespace'],
      ] as const) {
        const answer = await post(operation, payload)
        expect(answer.status, `${operation} ${JSON.stringify(payload)}`).toBe(400)
        expect(answer.body.error.errors).toEqual([expect.objectContaining({ location })])
      }
    })

    it('403 without the action on the namespace (or on every one); getOverride answers 404, as for a missing one', async () => {
      const { name, id } = await made()
      await sdk().ratelimit.setOverride({ namespace: name, identifier: 'held', limit: 1, duration: 1_000 })
      const readOnly = await as([`ratelimit.${id}.read_override`])
      const set = { namespace: name, identifier: 'x', limit: 1, duration: 1_000 }
      expect((await post('ratelimit.setOverride', set, readOnly)).status).toBe(403)
      expect((await post('ratelimit.deleteOverride', { namespace: id, identifier: 'held' }, readOnly)).status).toBe(403)
      expect((await post('ratelimit.listOverrides', { namespace: id }, readOnly)).status).toBe(200)
      expect((await post('ratelimit.listOverrides', { namespace: id }, await as(['ratelimit.*.limit']))).status).toBe(
        403,
      )
      expect((await post('ratelimit.setOverride', set, await as([`ratelimit.${id}.set_override`]))).status).toBe(200)
      expect((await post('ratelimit.setOverride', set, await as(['ratelimit.*.set_override']))).status).toBe(200)
      // A namespace not made: a root key without the action on every namespace learns nothing of which exist.
      expect((await post('ratelimit.setOverride', { ...set, namespace: fresh() }, readOnly)).status).toBe(403)
      expect((await post('ratelimit.getOverride', { namespace: id, identifier: 'held' }, readOnly)).status).toBe(200)
      const unread = await as(['ratelimit.*.limit'])
      const held = await post('ratelimit.getOverride', { namespace: id, identifier: 'held' }, unread)
      expect(held.status).toBe(404)
      // Exactly what a root key that may read gets for an override not set (in another namespace).
      const other = await made()
      const absent = await post('ratelimit.getOverride', { namespace: other.id, identifier: 'held' })
      expect(held.body.error).toEqual(absent.body.error)
      expect(held.body.error.type).toBe('https://unkey.com/docs/errors/unkey/data/ratelimit_override_not_found')
      const unknownNamespace = await post('ratelimit.getOverride', { namespace: fresh(), identifier: 'held' }, unread)
      expect(unknownNamespace.body.error).toEqual(held.body.error)
    })
  })

  describe('@unkey/ratelimit 2.1.4 over a real port', () => {
    let baseUrl: string
    beforeAll(async () => {
      await stack.controlPlane.app.listen({ port: 0, host: '127.0.0.1' })
      baseUrl = `http://127.0.0.1:${(stack.controlPlane.app.server.address() as AddressInfo).port}`
    })

    it('limits through the control plane (duration as text or ms), overrides set with its Overrides client', async () => {
      const namespace = fresh()
      const limiter = new Ratelimit({ rootKey: TEST_ROOT_KEY, namespace, limit: 2, duration: '10s', baseUrl })
      const first = await limiter.limit('user_1')
      expect(first).toEqual({ success: true, limit: 2, remaining: 1, reset: START + 10_000 })
      expect(await limiter.limit('user_1', { cost: 1 })).toMatchObject({ success: true, remaining: 0 })
      expect(await limiter.limit('user_1')).toMatchObject({ success: false, remaining: 0 })
      expect(await limiter.limit('user_2', { limit: { limit: 5, duration: 60_000 } })).toMatchObject({
        success: true,
        limit: 5,
        remaining: 4,
      })
      const overrides = new Overrides({ rootKey: TEST_ROOT_KEY, baseUrl })
      const set = await overrides.setOverride({ namespace, identifier: 'vip', limit: 100, duration: 60_000 })
      expect(set.data.overrideId).toMatch(/^rlor_/)
      expect(await limiter.limit('vip')).toEqual({
        success: true,
        limit: 100,
        remaining: 99,
        reset: START + 60_000,
        overrideId: set.data.overrideId,
      })
      expect((await overrides.listOverrides({ namespace })).data).toHaveLength(1)
    })

    it('a wrong root key reaches onError as an error', async () => {
      const errors: string[] = []
      const limiter = new Ratelimit({
        rootKey: 'wrong-root-key',
        namespace: fresh(),
        limit: 1,
        duration: 1_000,
        baseUrl,
        onError: (err) => {
          errors.push(err.message)
          return { success: false, limit: 0, remaining: 0, reset: 0 }
        },
      })
      expect(await limiter.limit('user_1')).toMatchObject({ success: false })
      expect(errors).toHaveLength(1)
    })
  })

  describe('on the verifier, with root keys it learns from the change feed', () => {
    const keys = new Map<string, Record<string, string>>()
    const server = {
      get app() {
        return stack.verifier.app
      },
    }
    const headersOf = (name: string) => keys.get(name) ?? { ...JSON_ONLY, authorization: `Bearer ${name}` }
    beforeAll(async () => {
      // Made through rootKeys.createRootKey, which mirrors each root key as a record the verifier caches.
      for (const [name, permissions] of [
        ['all-limits', ['ratelimit.*.limit', 'ratelimit.*.create_namespace']],
        ['limit-only', ['ratelimit.*.limit']],
      ] as const) {
        const created = await stack.post('rootKeys.createRootKey', { permissions })
        keys.set(name, { ...JSON_ONLY, authorization: `Bearer ${created.body.key}` })
      }
    })

    it('counts in the control plane’s windows, by name or id, overrides applied; makes no namespace', async () => {
      const { name, id } = await made()
      const overrideId = (
        await sdk().ratelimit.setOverride({ namespace: name, identifier: 'o', limit: 2, duration: 60_000 })
      ).data.overrideId
      const call = { identifier: 'o', limit: 50, duration: 60_000 }
      const all = headersOf('all-limits')
      expect((await post('ratelimit.limit', { namespace: id, ...call }, all, server)).body.data).toEqual({
        success: true,
        limit: 2,
        remaining: 1,
        reset: START + 60_000,
        overrideId,
      })
      expect((await sdk().ratelimit.limit({ namespace: name, ...call })).data).toMatchObject({ remaining: 0 })
      const multi = await post('ratelimit.multiLimit', [{ namespace: name, ...call }], all, server)
      expect(multi.body.data).toMatchObject({ passed: false, limits: [{ passed: false, overrideId }] })
      const unknown = fresh()
      const counted = await post('ratelimit.limit', { namespace: unknown, ...call }, all, server)
      expect(counted.body.data).toMatchObject({ success: true, remaining: 49 })
      expect(await namespaceOf(unknown)).toBeNull()
      expect(
        (await post('ratelimit.limit', { namespace: unknown, ...call }, headersOf('limit-only'), server)).status,
      ).toBe(403)
    })

    it('400 without a root key, 401 for an unknown one, both before the body is read', async () => {
      expect((await post('ratelimit.limit', { bad: true }, JSON_ONLY, server)).body.error).toMatchObject({
        status: 400,
        type: expect.stringMatching(/authentication\/missing$/),
      })
      expect((await post('ratelimit.multiLimit', [], headersOf('unknown'), server)).status).toBe(401)
      // A revoked root key is refused by the verifier too (within the revocation bound: at once in process).
      const revoked = await stack.post('rootKeys.createRootKey', { permissions: ['ratelimit.*.limit'] })
      const call = { namespace: fresh(), identifier: 'o', limit: 5, duration: 60_000 }
      const headers = { ...JSON_ONLY, authorization: `Bearer ${revoked.body.key}` }
      expect((await post('ratelimit.limit', call, headers, server)).status).toBe(403)
      expect((await stack.post('rootKeys.revokeRootKey', { rootKeyId: revoked.body.rootKeyId })).status).toBe(200)
      await waitFor(
        async () => (await post('ratelimit.limit', call, headers, server)).status === 401,
        'the revoked root key to be refused by the verifier',
        2_000,
        5,
      )
    })
  })
})
