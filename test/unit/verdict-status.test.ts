import { afterEach, describe, expect, it, vi } from 'vitest'
import { gatewayAnswer } from '../../verifier/verdict-status.js'

describe('verdict → gateway answer', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('maps every code to its status', () => {
    const cases = [
      ['VALID', 200],
      ['NOT_FOUND', 401],
      ['DISABLED', 401],
      ['EXPIRED', 401],
      ['FORBIDDEN', 403],
      ['INSUFFICIENT_PERMISSIONS', 403],
      ['RATE_LIMITED', 429],
      ['USAGE_EXCEEDED', 429],
    ] as const
    for (const [code, status] of cases) {
      const answer = gatewayAnswer({ valid: code === 'VALID', code, keyId: 'key_1' }, 1_000_000)
      expect(answer.status, code).toBe(status)
      expect(answer.headers['x-keygate-code']).toBe(code)
    }
    expect(gatewayAnswer({ code: 'MISSING_KEY' }, 1_000_000)).toMatchObject({
      status: 401,
      headers: { 'x-keygate-code': 'MISSING_KEY' },
    })
    expect(gatewayAnswer({ code: 'API_ID_REQUIRED' }, 1_000_000)).toMatchObject({
      status: 403,
      headers: { 'x-keygate-code': 'API_ID_REQUIRED' },
    })
  })

  it('puts Retry-After and RateLimit-* on a rate-limited answer, and the remaining credits on a valid one', () => {
    const limited = gatewayAnswer(
      {
        valid: false,
        code: 'RATE_LIMITED',
        keyId: 'key_1',
        ratelimit: { limit: 10, remaining: 0, reset: 1_000_000 + 4_200 },
      },
      1_000_000,
    )
    expect(limited.headers).toMatchObject({
      'retry-after': '5',
      'ratelimit-limit': '10',
      'ratelimit-remaining': '0',
      'ratelimit-reset': '5',
    })
    expect(
      gatewayAnswer({ valid: false, code: 'USAGE_EXCEEDED', keyId: 'key_1' }, 1_000_000).headers['retry-after'],
    ).toBe('60')
    expect(
      gatewayAnswer({ valid: true, code: 'VALID', keyId: 'key_1', ownerId: 'o', remaining: 7 }, 1_000_000).headers,
    ).toMatchObject({
      'x-keygate-key-id': 'key_1',
      'x-keygate-owner-id': 'o',
      'x-keygate-remaining': '7',
    })
  })
})
