import { Webhook } from 'standardwebhooks'
import { Webhook as SvixWebhook } from 'svix'
import { describe, expect, it } from 'vitest'
import { eventBody, retryDelayMs } from '../../control-plane/webhooks/delivery/delivery-worker.js'
import { signatureHeaders } from '../../control-plane/webhooks/delivery/signature-headers.js'
import type { WebhookEvent } from '../../shared/webhook.js'

const secret = (byte: number) => `whsec_${Buffer.alloc(32, byte).toString('base64')}`
const EVENT: WebhookEvent = { id: 'msg_test', type: 'key.created', at: Date.UTC(2026, 0, 2), data: { keyId: 'key_1' } }

describe('webhook signatures', () => {
  it('verify with standardwebhooks and svix, unchanged, and fail for another secret or body', () => {
    const body = eventBody(EVENT)
    const now = Date.now()
    const headers = signatureHeaders([{ secret: secret(1), createdAt: 0 }], EVENT.id, now, body)
    expect(headers['webhook-id']).toBe('msg_test')
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(now / 1000)))
    expect(new Webhook(secret(1)).verify(body, headers)).toEqual(JSON.parse(body))
    expect(new SvixWebhook(secret(1)).verify(body, headers)).toEqual(JSON.parse(body))
    expect(() => new Webhook(secret(2)).verify(body, headers)).toThrow()
    expect(() => new Webhook(secret(1)).verify(body.replace('key_1', 'key_2'), headers)).toThrow()
  })

  it('signs with every secret still in its grace period, so either verifies during a rotation', () => {
    const body = eventBody(EVENT)
    const now = Date.now()
    const rotating = [
      { secret: secret(3), createdAt: now },
      { secret: secret(1), createdAt: 0, expiresAt: now + 60_000 },
      { secret: secret(2), createdAt: 0, expiresAt: now - 1 },
    ]
    const headers = signatureHeaders(rotating, EVENT.id, now, body)
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2)
    expect(() => new Webhook(secret(3)).verify(body, headers)).not.toThrow()
    expect(() => new Webhook(secret(1)).verify(body, headers)).not.toThrow()
    // Past its grace period, the old secret signs nothing.
    expect(() => new Webhook(secret(2)).verify(body, headers)).toThrow()
  })

  it('sends the Standard Webhooks body: type, ISO timestamp, data', () => {
    expect(JSON.parse(eventBody(EVENT))).toEqual({
      type: 'key.created',
      timestamp: '2026-01-02T00:00:00.000Z',
      data: { keyId: 'key_1' },
    })
  })
})

describe('retryDelayMs', () => {
  it('doubles from a second, is capped, and jitters between half and all of it', () => {
    expect(retryDelayMs(1, 3_600_000, () => 1)).toBe(1_000)
    expect(retryDelayMs(2, 3_600_000, () => 1)).toBe(2_000)
    expect(retryDelayMs(5, 3_600_000, () => 1)).toBe(16_000)
    expect(retryDelayMs(5, 3_600_000, () => 0)).toBe(8_000)
    expect(retryDelayMs(40, 3_600_000, () => 1)).toBe(3_600_000)
    expect(retryDelayMs(40, 2_000, () => 0)).toBe(1_000)
  })
})
