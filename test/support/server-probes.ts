import { JSON_ONLY } from './both-stores.js'
import type { TestServer } from './apps.js'

/**
 * A metric's value as the server's /metrics shows it (its first series, or the sum of the series with `labels`), 0
 * when it has none.
 */
export async function metric(server: TestServer, name: string, labels?: Record<string, string>): Promise<number> {
  const page = await server.app.inject({ method: 'GET', url: '/metrics' })
  const series = page.body.split('\n').filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
  if (labels === undefined) return series[0] ? Number(series[0].split(' ').at(-1)) : 0
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`)
  return series
    .filter((line) => wanted.every((pair) => line.includes(pair)))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0)
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
