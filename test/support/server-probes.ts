import { JSON_ONLY } from './both-stores.js'
import type { TestServer } from './apps.js'

/** A metric's value as the server's /metrics shows it (its first series), 0 when it has none. */
export async function metric(server: TestServer, name: string): Promise<number> {
  const page = await server.app.inject({ method: 'GET', url: '/metrics' })
  const line = page.body.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
  return line ? Number(line.split(' ').at(-1)) : 0
}

/** The server's v1 verifyKey answer for `key`. */
export async function verdict(server: TestServer, key: string): Promise<{ valid: boolean; code: string }> {
  const response = await server.app.inject({
    method: 'POST',
    url: '/v1/keys.verifyKey',
    headers: JSON_ONLY,
    payload: { key },
  })
  return response.json()
}
