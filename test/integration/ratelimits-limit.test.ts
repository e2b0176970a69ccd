import { randomUUID } from 'node:crypto'
import { beforeEach, expect, it } from 'vitest'
import { ManualClock, type TestServer } from '../support/apps.js'
import { ADMIN_HEADERS, JSON_ONLY, onBothStores } from '../support/both-stores.js'
import { namespaceOf as storedNamespace, rootKeyWith } from '../support/ratelimits.js'
import { waitFor } from '../support/wait-for.js'

/**
 * ratelimits.limit (Unkey's v1_ratelimits_limit.happy and .overrides tests, re-expressed): on the control plane with
 * a root key and on the verifier without one, exact or async, overrides applied and followed within the bound.
 */

const START = Date.UTC(2026, 10, 22, 12, 0, 0)

onBothStores('ratelimits.limit', { clock: () => new ManualClock(START) }, (stack) => {
  const clock = stack.clock!
  beforeEach(() => {
    clock.ms = START
  })
  const limit = (payload: object, server: TestServer = stack.controlPlane, auth?: Record<string, string>) =>
    stack.post('ratelimits.limit', payload, server, auth)
  const onVerifier = (payload: object) => limit(payload, stack.verifier, JSON_ONLY)
  const namespaceOf = (name: string) => storedNamespace(stack.backend, name)
  const as = (permissions: string[]) => rootKeyWith(stack.backend, permissions)

  for (const async of [false, true]) {
    it(`${async ? 'async' : 'exact'}: lets \`limit\` units through per window, then refuses until the window ends`, async () => {
      const call = { namespace: `ns-${randomUUID()}`, identifier: 'user_1', limit: 3, duration: 10_000, async }
      const reset = START + 10_000
      for (const remaining of [2, 1, 0]) {
        expect(await onVerifier(call)).toEqual({ status: 200, body: { success: true, limit: 3, remaining, reset } })
      }
      clock.advance(9_999)
      expect((await onVerifier(call)).body).toEqual({ success: false, limit: 3, remaining: 0, reset })
      clock.advance(1)
      expect((await onVerifier(call)).body).toEqual({ success: true, limit: 3, remaining: 2, reset: reset + 10_000 })
    })
  }

  it('counts the control plane and the verifier in one window (exact), and identifiers and namespaces apart', async () => {
    const namespace = `ns-${randomUUID()}`
    const call = { namespace, identifier: 'user_1', limit: 2, duration: 60_000 }
    expect((await limit(call)).body).toMatchObject({ success: true, remaining: 1 })
    expect((await onVerifier(call)).body).toMatchObject({ success: true, remaining: 0 })
    expect((await limit(call)).body).toMatchObject({ success: false, remaining: 0 })
    expect((await onVerifier({ ...call, identifier: 'user_2' })).body).toMatchObject({ success: true, remaining: 1 })
    expect((await onVerifier({ ...call, namespace: `${namespace}-other` })).body).toMatchObject({ success: true })
  })

  it('with cost 0 answers the window without using it; a cost larger than what is left is refused and not charged', async () => {
    const call = { namespace: `ns-${randomUUID()}`, identifier: randomUUID(), limit: 10, duration: 10_000 }
    for (let i = 0; i < 5; i++) expect((await onVerifier({ ...call, cost: 0 })).body.remaining).toBe(10)
    expect((await onVerifier({ ...call, cost: 7 })).body).toMatchObject({ success: true, remaining: 3 })
    expect((await onVerifier({ ...call, cost: 4 })).body).toMatchObject({ success: false, remaining: 3 })
    expect((await onVerifier({ ...call, cost: 3 })).body).toMatchObject({ success: true, remaining: 0 })
    expect((await limit({ ...call, cost: 0 })).body).toMatchObject({ success: true, remaining: 0 })
  })

  it('defaults: namespace `default`, cost 1, exact; meta and resources accepted', async () => {
    const identifier = randomUUID()
    const call = { identifier, limit: 5, duration: 60_000 }
    expect((await limit(call)).body).toMatchObject({ success: true, remaining: 4 })
    expect(
      (
        await onVerifier({
          namespace: 'default',
          ...call,
          meta: { plan: 'pro', n: 1, on: true, none: null },
          resources: [{ type: 'project', id: 'p_123', name: 'dub', meta: { a: 'b' } }],
        })
      ).body,
    ).toMatchObject({ success: true, remaining: 3 })
    expect(await namespaceOf('default')).toMatchObject({ name: 'default' })
  })

  it('refuses malformed calls with 400 on both processes', async () => {
    const good = { namespace: 'n', identifier: 'i', limit: 1, duration: 1_000 }
    for (const bad of [
      { ...good, limit: 0 },
      { ...good, limit: 1.5 },
      { ...good, duration: 999 },
      { ...good, cost: -1 },
      { ...good, async: 'yes' },
      { ...good, unknown: 1 },
      { namespace: 'n', limit: 1, duration: 1_000 },
      { ...good, meta: { nested: { no: 1 } } },
    ]) {
      for (const answer of [await limit(bad), await onVerifier(bad)]) {
        expect(answer.status, JSON.stringify(bad)).toBe(400)
        expect(answer.body.error.code).toBe('BAD_REQUEST')
      }
    }
  })

  it('makes the namespace on its first use on the control plane (audited), and not on the verifier', async () => {
    const name = `ns-${randomUUID()}`
    await onVerifier({ namespace: name, identifier: 'a', limit: 1, duration: 1_000 })
    expect(await namespaceOf(name)).toBeNull()
    await limit({ namespace: name, identifier: 'a', limit: 1, duration: 1_000 })
    const made = await namespaceOf(name)
    expect(made).toMatchObject({ name, wildcards: [] })
    expect(made!.id).toMatch(/^rlns_/)
    const audit = await stack.controlPlane.app.inject({
      method: 'GET',
      url: '/v1/audit.list?limit=1',
      headers: ADMIN_HEADERS,
    })
    expect(audit.json().entries[0]).toMatchObject({
      action: 'ratelimits.createNamespace',
      after: { id: made!.id, name },
    })
    // The second use finds it: one record, the same id.
    await limit({ namespace: name, identifier: 'b', limit: 1, duration: 1_000 })
    expect((await namespaceOf(name))!.id).toBe(made!.id)
  })

  it('on the verifier needs no root key and ignores an Authorization header', async () => {
    const call = { namespace: `ns-${randomUUID()}`, identifier: 'x', limit: 1, duration: 1_000 }
    expect((await limit(call, stack.verifier, { ...JSON_ONLY, authorization: 'Bearer nonsense' })).status).toBe(200)
  })

  it('on the control plane needs ratelimit.<namespaceId|*>.limit, and create_namespace for a new namespace', async () => {
    const name = `ns-${randomUUID()}`
    const call = { namespace: name, identifier: 'x', limit: 5, duration: 60_000 }
    // A new namespace: ratelimit.*.limit alone is a 404 (Unkey's answer), nothing made; nothing at all is a 403.
    const limitOnly = await as(['ratelimit.*.limit'])
    expect(await limit(call, stack.controlPlane, limitOnly)).toMatchObject({
      status: 404,
      body: { error: { code: 'NOT_FOUND', message: `Namespace ${name} not found` } },
    })
    expect((await limit(call, stack.controlPlane, await as(['ratelimit.*.create_namespace']))).status).toBe(403)
    expect((await limit(call, stack.controlPlane, await as(['api.*.*', 'rbac.*.*']))).status).toBe(403)
    expect(await namespaceOf(name)).toBeNull()
    expect(
      (await limit(call, stack.controlPlane, await as(['ratelimit.*.limit', 'ratelimit.*.create_namespace']))).status,
    ).toBe(200)
    // An existing namespace: the limit action on it, or on every namespace.
    const { id } = (await namespaceOf(name))!
    expect((await limit(call, stack.controlPlane, limitOnly)).status).toBe(200)
    expect((await limit(call, stack.controlPlane, await as([`ratelimit.${id}.limit`]))).status).toBe(200)
    expect((await limit(call, stack.controlPlane, await as(['ratelimit.rlns_other.limit']))).status).toBe(403)
    expect((await limit(call, stack.controlPlane, await as([`ratelimit.${id}.set_override`]))).status).toBe(403)
  })

  it('applies an override: the identifier’s own before a matching wildcard, the request’s limit otherwise', async () => {
    const namespace = `ns-${randomUUID()}`
    const prefix = randomUUID()
    const call = { namespace, limit: 10, duration: 60_000 }
    const set = async (identifier: string, overrideLimit: number) =>
      expect(
        (
          await stack.post('ratelimits.setOverride', {
            namespaceName: namespace,
            identifier,
            limit: overrideLimit,
            duration: 60_000,
          })
        ).status,
      ).toBe(200)
    await set(`${prefix}*`, 30)
    await set(`${prefix}-exact`, 20)
    await set(`*${prefix}-suffix`, 40)
    const limitOf = async (identifier: string) => {
      const expected = (await limit({ ...call, identifier })).body.limit
      // Every answer counts: the limit asked for is far from reached.
      await waitFor(
        async () => (await onVerifier({ ...call, identifier })).body.limit === expected,
        `the verifier to answer the limit of ${identifier} as the control plane does`,
      )
      return expected
    }
    expect(await limitOf(randomUUID())).toBe(10)
    expect(await limitOf(`${prefix}${randomUUID()}`)).toBe(30)
    expect(await limitOf(`${prefix}-exact`)).toBe(20)
    // Two patterns match: the oldest wins.
    expect(await limitOf(`${prefix}-suffix`)).toBe(30)
    expect(await limitOf(`x-${prefix}-suffix`)).toBe(40)
  })

  it('applies an override’s duration and async too; an override of 0 refuses every call', async () => {
    const namespace = `ns-${randomUUID()}`
    await stack.post('ratelimits.setOverride', {
      namespaceName: namespace,
      identifier: 'slow',
      limit: 2,
      duration: 3_600_000,
    })
    await stack.post('ratelimits.setOverride', {
      namespaceName: namespace,
      identifier: 'blocked',
      limit: 0,
      duration: 1_000,
    })
    const call = { namespace, limit: 100, duration: 1_000 }
    expect((await onVerifier({ ...call, identifier: 'slow' })).body).toEqual({
      success: true,
      limit: 2,
      remaining: 1,
      reset: START + 3_600_000,
    })
    expect((await onVerifier({ ...call, identifier: 'blocked' })).body).toMatchObject({ success: false, limit: 0 })
  })

  it('follows an override set, changed and deleted on the control plane within the revocation bound', async () => {
    const namespace = `ns-${randomUUID()}`
    const identifier = randomUUID()
    const call = { namespace, identifier, limit: 10, duration: 60_000, cost: 0 }
    expect((await onVerifier(call)).body.limit).toBe(10)
    const expectWithinBound = async (expected: number) => {
      const since = Date.now()
      await waitFor(async () => (await onVerifier(call)).body.limit === expected, `limit ${expected} on the verifier`)
      expect(Date.now() - since).toBeLessThan(5_000)
    }
    await stack.post('ratelimits.setOverride', { namespaceName: namespace, identifier, limit: 3, duration: 60_000 })
    await expectWithinBound(3)
    await stack.post('ratelimits.setOverride', { namespaceName: namespace, identifier, limit: 4, duration: 60_000 })
    await expectWithinBound(4)
    await stack.post('ratelimits.deleteOverride', { namespaceName: namespace, identifier })
    await expectWithinBound(10)
    // A wildcard lives in the namespace's record: its changes travel the same way.
    await stack.post('ratelimits.setOverride', {
      namespaceName: namespace,
      identifier: `${identifier.slice(0, 8)}*`,
      limit: 6,
      duration: 60_000,
    })
    await expectWithinBound(6)
    await stack.post('ratelimits.deleteOverride', {
      namespaceName: namespace,
      identifier: `${identifier.slice(0, 8)}*`,
    })
    await expectWithinBound(10)
  })
})
