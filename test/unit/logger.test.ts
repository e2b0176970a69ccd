import { describe, expect, it } from 'vitest'
import { capturedLogger } from '../support/apps.js'

describe('log redaction', () => {
  it('censors keys, root keys and credentials wherever they are logged, at any level', () => {
    const { log, lines } = capturedLogger()
    const secret = 'sk_secret_value_123456789'
    log.trace({ req: { headers: { authorization: `Bearer ${secret}`, 'x-api-key': secret, cookie: secret } } }, 'request')
    log.info({ key: secret, body: { key: secret }, rootKey: secret }, 'body')
    log.error({ headers: { authorization: secret, 'x-api-key': secret }, payload: { key: secret } }, 'nested')
    expect(lines).toHaveLength(3)
    expect(lines.join('\n')).not.toContain(secret)
    expect(lines.join('\n')).toContain('[redacted]')
  })
})
