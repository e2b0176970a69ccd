import { describe, expect, it } from 'vitest'
import { parseJsonObject, parseRatelimits } from '../../console/src/json-input.js'
import { bodyOf, changesOf, EMPTY_KEY_FORM, formOf } from '../../console/src/pages/key-form.js'

/** The console's key form, turned into keys.createKey and keys.updateKey bodies (browser code, no DOM needed). */
describe("the console's key form", () => {
  it('creates with the fields filled in only, roles and permissions as name lists', () => {
    const { body, problems } = bodyOf(
      {
        ...EMPTY_KEY_FORM,
        name: ' acme ',
        prefix: 'sk',
        externalId: 'acme',
        meta: '{"plan": "pro"}',
        remaining: '100',
        refillInterval: 'monthly',
        refillAmount: '100',
        refillDay: '15',
        ratelimitLimit: '10',
        roles: 'reader, writer',
        permissions: 'documents.read',
      },
      'create',
    )
    expect(problems).toEqual({})
    expect(body).toEqual({
      name: 'acme',
      prefix: 'sk',
      externalId: 'acme',
      meta: { plan: 'pro' },
      remaining: 100,
      refill: { interval: 'monthly', amount: 100, refillDay: 15 },
      ratelimit: { limit: 10, duration: 60_000, async: true },
      roles: ['reader', 'writer'],
      permissions: ['documents.read'],
      enabled: true,
    })
    expect(bodyOf(EMPTY_KEY_FORM, 'create').body).toEqual({ enabled: true })
  })

  it('updates with null for what was cleared, and lists replaced whole', () => {
    const key = {
      id: 'key_1',
      start: 'sk_abcd',
      apiId: 'api_1',
      workspaceId: 'ws_keygate',
      name: 'acme',
      meta: { plan: 'pro' },
      createdAt: 1,
      remaining: 5,
      ratelimit: { limit: 10, duration: 1000, async: false },
      roles: ['reader'],
      enabled: true,
    }
    expect(bodyOf(formOf(key), 'update').body).toEqual({
      name: 'acme',
      externalId: null,
      meta: { plan: 'pro' },
      expires: null,
      remaining: 5,
      refill: null,
      ratelimit: { limit: 10, duration: 1000, async: false },
      roles: ['reader'],
      permissions: [],
      enabled: true,
    })
    const cleared = bodyOf({ ...formOf(key), name: '', meta: '', remaining: '', ratelimitLimit: '' }, 'update').body
    expect(cleared).toMatchObject({ name: null, meta: null, remaining: null, ratelimit: null })
  })

  it('edits with the changed fields only: nothing the form shows coarser or the admin left alone', () => {
    const loaded = formOf({
      id: 'key_1',
      start: 'sk_abcd',
      apiId: 'api_1',
      workspaceId: 'ws_keygate',
      name: 'acme',
      createdAt: 1,
      // Seconds and milliseconds: the form's datetime-local value holds minutes.
      expires: Date.UTC(2030, 0, 1, 12, 30, 45, 678),
      refill: { interval: 'monthly', amount: 5, refillDay: 3 },
      remaining: 5,
      ratelimit: { limit: 10, duration: 1000, async: false },
      roles: ['reader'],
      permissions: ['documents.read'],
      enabled: false,
    })
    expect(changesOf(loaded, loaded)).toEqual({ body: {}, problems: {} })
    expect(changesOf(loaded, { ...loaded, name: 'renamed' }).body).toEqual({ name: 'renamed' })
    expect(changesOf(loaded, { ...loaded, name: '', enabled: true, roles: '' }).body).toEqual({
      name: null,
      enabled: true,
      roles: [],
    })
    expect(changesOf(loaded, { ...loaded, ratelimitLimit: '20' }).body).toEqual({
      ratelimit: { limit: 20, duration: 1000, async: false },
    })
    expect(changesOf(loaded, { ...loaded, remaining: 'x' }).problems).toEqual({ remaining: 'must be a whole number' })
  })

  it('says what is wrong by field before anything is sent', () => {
    const { problems } = bodyOf(
      { ...EMPTY_KEY_FORM, meta: '[1]', remaining: '1.5', refillInterval: 'daily', ratelimitLimit: 'x' },
      'create',
    )
    expect(problems).toEqual({
      meta: 'must be a JSON object',
      remaining: 'must be a whole number',
      refillAmount: 'a refill needs an amount',
      ratelimitLimit: 'must be a whole number',
    })
    expect(parseJsonObject('{"a":').problem).toMatch(/^not JSON: /)
    expect(parseJsonObject('  ')).toEqual({})
    expect(parseRatelimits('{}').problem).toMatch(/JSON list/)
    expect(parseRatelimits('')).toEqual({ value: [] })
  })
})
