import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { QUOTED_INPUT_MAX } from '../../shared/clip-input.js'
import { startTestControlPlane, TEST_ROOT_KEY, type TestServer } from '../support/apps.js'

/**
 * A 4xx message quotes the client's own text (a path, a field name, a root-key permission) to show what was
 * refused, but only its start: a 10,000-character value echoed whole makes the answer, and every log of it,
 * as large as the client likes.
 */
const LONG = 10_000
/** The most a message may hold beside one clipped quote: the sentence around it and any list of valid values. */
const MESSAGE_MAX = 600

let server: TestServer
beforeAll(async () => {
  server = await startTestControlPlane()
})
afterAll(() => server.close())

async function messageOf(
  method: 'GET' | 'POST',
  url: string,
  body?: unknown,
): Promise<{ status: number; message: string }> {
  const answer = await server.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${TEST_ROOT_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { payload: JSON.stringify(body) } : {}),
  })
  return { status: answer.statusCode, message: answer.json<{ error: { message: string } }>().error.message }
}

/** The message quotes `text`'s first QUOTED_INPUT_MAX characters and '…', and is no longer than a sentence. */
function expectClipped(message: string, text: string): void {
  expect(message).toContain(`${text.slice(0, QUOTED_INPUT_MAX)}…`)
  expect(message).not.toContain(text.slice(0, QUOTED_INPUT_MAX + 1))
  expect(message.length).toBeLessThan(MESSAGE_MAX)
}

describe('4xx messages quote client input clipped', () => {
  it('a path segment too long for the router (/docs/errors/<10,000 characters>)', async () => {
    const path = `/docs/errors/${'A'.repeat(LONG)}`
    const { status, message } = await messageOf('GET', path)
    expect(status).toBe(400)
    expectClipped(message, path)
  })

  it('an unknown error code under /docs/errors/', async () => {
    const code = 'B'.repeat(90)
    const { status, message } = await messageOf('GET', `/docs/errors/${code}`)
    expect(status).toBe(404)
    expectClipped(message, code)
  })

  it('a path that is no operation', async () => {
    const path = `/v1/${'keys.createKey'.repeat(LONG / 14)}`
    const { status, message } = await messageOf('POST', path, {})
    expect(status).toBe(404)
    expectClipped(message, path)
  })

  it('an unknown field, alone or beside a missing one', async () => {
    const field = 'f'.repeat(LONG)
    const alone = await messageOf('POST', '/v1/apis.createApi', { name: 'x', [field]: 1 })
    expect(alone.status).toBe(400)
    expectClipped(alone.message, field)
    const withMissing = await messageOf('POST', '/v1/apis.createApi', { [field]: 1 })
    expect(withMissing.status).toBe(400)
    expectClipped(withMissing.message, field)
  })

  it('a malformed root-key permission, and an unknown action of a known resource', async () => {
    for (const permission of ['p'.repeat(LONG), `api.*.${'a'.repeat(LONG)}`]) {
      const { status, message } = await messageOf('POST', '/v1/rootKeys.createRootKey', {
        name: 'long',
        permissions: [permission],
      })
      expect(status).toBe(400)
      expectClipped(message, permission)
    }
  })
})
