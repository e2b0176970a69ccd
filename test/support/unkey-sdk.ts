import { HTTPClient, Unkey } from '@unkey/api'
import type { TestServer } from './apps.js'

/**
 * Unkey's own SDK (@unkey/api 2.x) talking to a test server through `inject` (no port): its zod schemas check
 * every answer, so a field the SDK would refuse fails the test as it would fail a user. Retries are off.
 */
export function unkeySdk(server: TestServer, rootKey: string): Unkey {
  const httpClient = new HTTPClient({
    fetcher: async (input, init) => {
      const request = input instanceof Request ? input : new Request(input, init)
      const url = new URL(request.url)
      const response = await server.app.inject({
        method: request.method as 'POST',
        url: url.pathname + url.search,
        headers: Object.fromEntries(request.headers.entries()),
        ...(request.method === 'GET' ? {} : { payload: await request.text() }),
      })
      const headers = new Headers()
      for (const [name, value] of Object.entries(response.headers)) {
        if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : String(value))
      }
      return new Response(response.statusCode === 204 ? null : response.body, {
        status: response.statusCode,
        headers,
      })
    },
  })
  return new Unkey({ rootKey, serverURL: 'http://keygate.test', httpClient, retryConfig: { strategy: 'none' } })
}
