import { describe, expect, it } from 'vitest'
import { loggableUrl } from '../../shared/logger.js'
import { capturedLogger } from '../support/apps.js'

describe('log redaction', () => {
  it('censors keys, root keys and credentials wherever they are logged, at any level', () => {
    const { log, lines } = capturedLogger()
    const secret = 'sk_secret_value_123456789'
    log.trace(
      { req: { headers: { authorization: `Bearer ${secret}`, 'x-api-key': secret, cookie: secret } } },
      'request',
    )
    log.info({ key: secret, body: { key: secret }, rootKey: secret }, 'body')
    log.error({ headers: { authorization: secret, 'x-api-key': secret }, payload: { key: secret } }, 'nested')
    expect(lines).toHaveLength(3)
    expect(lines.join('\n')).not.toContain(secret)
    expect(lines.join('\n')).toContain('[redacted]')
  })

  it('logs the path and query parameter names, and the values of harmless ones only', () => {
    expect(loggableUrl('/v1/keys.verifyKey?key=sk_abc&apiId=api_1')).toBe(
      '/v1/keys.verifyKey?key=[redacted]&apiId=api_1',
    )
    expect(loggableUrl('/x?a=1&ROOTKEY=r&api_key=k&token=t&roles=sk_x&apiKey=sk_y')).toBe(
      '/x?a=[redacted]&ROOTKEY=[redacted]&api_key=[redacted]&token=[redacted]&roles=[redacted]&apiKey=[redacted]',
    )
    // A bare word may be the key itself; an empty pair stays empty.
    expect(loggableUrl('/v1/authorize?sk_live_bare&&limit=5')).toBe('/v1/authorize?[redacted]&&limit=5')
    expect(loggableUrl('/v1/apis.listKeys?apiId=api_1&cursor=key_2&limit=10&externalId=ann@example.com')).toBe(
      '/v1/apis.listKeys?apiId=api_1&cursor=key_2&limit=10&externalId=[redacted]',
    )
    expect(loggableUrl('/v1/keys.getKey?keyId=key_1')).toBe('/v1/keys.getKey?keyId=key_1')
    // A key sent as a name: with an `=` after it, or a base64 bootstrap root key whose padding is one.
    const base64Key = 'q0J3kL9m2Xv8sT4wY7zA1bC6dE5fG0hI2jK4lM6nO8p='
    expect(loggableUrl(`/v1/apis.getApi?${base64Key}`)).toBe('/v1/apis.getApi?[redacted]=[redacted]')
    expect(loggableUrl('/v1/apis.getApi?apiId=api_1&sk_3ZkVq8Lb1Hn2Xw9Pd4Rt7M=1')).toBe(
      '/v1/apis.getApi?apiId=api_1&[redacted]=[redacted]',
    )
    const { log, lines } = capturedLogger()
    log.info(
      { req: { method: 'GET', url: '/v1/keys.verifyKey?key=sk_secret_in_query', ip: '127.0.0.1' } },
      'incoming request',
    )
    expect(lines.join('')).not.toContain('sk_secret_in_query')
  })
})
