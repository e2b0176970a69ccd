import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestControlPlane, type TestServer } from '../support/apps.js'

/** Sends raw bytes and returns the raw answer: for requests no HTTP client would send. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request))
    let answer = ''
    socket.on('data', (chunk) => (answer += String(chunk)))
    socket.on('end', () => resolve(answer))
    socket.on('error', reject)
    setTimeout(() => socket.destroy(), 3_000).unref()
  })
}

function parse(answer: string) {
  const [head = '', body = ''] = answer.split('\r\n\r\n')
  const status = Number(head.split(' ')[1])
  const requestId = /x-request-id: (\S+)/i.exec(head)?.[1]
  return { status, requestId, body: JSON.parse(body) as { error: Record<string, string> } }
}

describe('HTTP edge cases still answer in the contract shape with a request id', () => {
  let server: TestServer
  let port: number
  beforeAll(async () => {
    server = await startTestControlPlane()
    await server.app.listen({ port: 0, host: '127.0.0.1' })
    const address = server.app.server.address()
    port = typeof address === 'object' && address ? address.port : 0
  })
  afterAll(async () => {
    await server.close()
  })

  it('a URL that is not valid percent-encoding', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/v1/keys.getKey%`)
    expect(response.status).toBe(400)
    const body = (await response.json()) as { error: Record<string, string> }
    expect(body.error).toMatchObject({ code: 'BAD_REQUEST', requestId: response.headers.get('x-request-id') })
  })

  it('malformed HTTP and oversized headers, which Node rejects before any framework code', async () => {
    const malformed = parse(await raw(port, 'GET /livez HTTP/1.1\r\nHost: x\r\nthis is not a header\r\n\r\n'))
    expect(malformed.status).toBe(400)
    expect(malformed.body.error).toMatchObject({ code: 'BAD_REQUEST', requestId: malformed.requestId })
    expect(malformed.requestId).toMatch(/^req_/)

    const huge = parse(await raw(port, `GET /livez HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`))
    expect(huge.status).toBe(431)
    expect(huge.body.error).toMatchObject({ code: 'REQUEST_HEADER_FIELDS_TOO_LARGE', requestId: huge.requestId })
  })

  it('a wrong method or an unknown path is 405/404 whatever the body, which is never read', async () => {
    const headers = { 'content-type': 'application/json' }
    const put = await server.app.inject({ method: 'PUT', url: '/v1/keys.createKey', headers, payload: '{' })
    expect(put.statusCode).toBe(405)
    expect(put.json().error.code).toBe('METHOD_NOT_ALLOWED')
    const unknown = await server.app.inject({ method: 'POST', url: '/v1/keys.nope', headers, payload: '{' })
    expect(unknown.statusCode).toBe(404)
    const large = await server.app.inject({
      method: 'POST',
      url: '/v1/keys.nope',
      headers,
      payload: 'x'.repeat(1_200_000),
    })
    expect(large.statusCode).toBe(404)
  })

  it('suggests the operation a near miss was meant to be, and only then', async () => {
    const message = async (method: 'GET' | 'POST', url: string) =>
      (await server.app.inject({ method, url })).json().error.message as string
    expect(await message('POST', '/v1/keys.createkey')).toBe(
      'no operation at POST /v1/keys.createkey; did you mean keys.createKey?',
    )
    expect(await message('POST', '/v1/keys.creatKey')).toBe(
      'no operation at POST /v1/keys.creatKey; did you mean keys.createKey?',
    )
    // The method under the wrong service, or under none.
    expect(await message('POST', '/v1/apis.createKey')).toMatch(/; did you mean keys\.createKey\?$/)
    expect(await message('POST', '/v1/createKey')).toMatch(/; did you mean keys\.createKey\?$/)
    // Without /v1/, the whole path.
    expect(await message('GET', '/keys.getKey')).toBe('no operation at GET /keys.getKey; did you mean /v1/keys.getKey?')
    // Nothing close: no guess.
    expect(await message('POST', '/v1/keys.nope')).toBe('no operation at POST /v1/keys.nope')
    expect(await message('GET', '/favicon.ico')).toBe('no operation at GET /favicon.ico')
    // No guess for a long path, which is quoted by its first 60 characters.
    expect(await message('GET', `/v1/${'k'.repeat(5_000)}`)).toBe(`no operation at GET /v1/${'k'.repeat(56)}…`)
  })
})
