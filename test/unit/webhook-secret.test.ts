import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { newWebhookSecret, rotatedSecrets } from '../../control-plane/webhooks/webhook-secret.js'

const NOW = Date.UTC(2026, 0, 1)
const HOUR = 3_600_000

describe('newWebhookSecret', () => {
  it('is whsec_ and base64 of 32 random bytes, which a Standard Webhooks receiver takes as it is', () => {
    const { secret, createdAt } = newWebhookSecret(NOW)
    expect(createdAt).toBe(NOW)
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32)
    expect(() => new Webhook(secret)).not.toThrow()
    expect(newWebhookSecret(NOW).secret).not.toBe(secret)
  })
})

describe('rotatedSecrets', () => {
  const current = { secret: 'whsec_current', createdAt: NOW - 10 * HOUR }
  const fresh = { secret: 'whsec_fresh', createdAt: NOW }

  it('puts the new secret first and keeps the replaced one until the grace is over', () => {
    expect(rotatedSecrets([current], fresh, NOW, 24 * HOUR)).toEqual([
      fresh,
      { ...current, expiresAt: NOW + 24 * HOUR },
    ])
  })

  it('drops the replaced secret at once with no grace, and every other one too', () => {
    const older = { secret: 'whsec_older', createdAt: NOW - 20 * HOUR, expiresAt: NOW + HOUR }
    expect(rotatedSecrets([current, older], fresh, NOW, 0)).toEqual([fresh])
  })

  it('drops secrets whose time is up, and never lengthens an older one', () => {
    const expired = { secret: 'whsec_expired', createdAt: NOW - 30 * HOUR, expiresAt: NOW }
    const soon = { secret: 'whsec_soon', createdAt: NOW - 20 * HOUR, expiresAt: NOW + HOUR }
    const later = { secret: 'whsec_later', createdAt: NOW - 25 * HOUR, expiresAt: NOW + 48 * HOUR }
    expect(rotatedSecrets([current, soon, later, expired], fresh, NOW, 24 * HOUR)).toEqual([
      fresh,
      { ...current, expiresAt: NOW + 24 * HOUR },
      soon,
      { ...later, expiresAt: NOW + 24 * HOUR },
    ])
  })
})
