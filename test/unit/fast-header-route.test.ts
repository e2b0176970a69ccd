import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { Registry } from 'prom-client'
import { request } from 'undici'
import { capturedLogger } from '../support/apps.js'
import { fastHeaderPath, type HeaderAnswer } from '../../shared/http/fast-header-route.js'
import { fastRouteServerFactory } from '../../shared/http/fast-route.js'
import { RouteMetrics } from '../../shared/http/route-metrics.js'

/**
 * A header-only fast path answers from the server's request listener: whatever it cannot write (a header value
 * Node refuses) must drop that connection and be logged, never throw out of the listener and end the process.
 */
describe('a header-only fast path that cannot write its answer', () => {
  it('drops the connection and logs it, synchronously or not, and goes on serving', async () => {
    const { log, lines } = capturedLogger()
    const refused: HeaderAnswer = { status: 200, headers: { 'x-keygate-owner-id': 'a\nb' } }
    const path = fastHeaderPath(
      {
        url: '/v1/authorize',
        answer: ({ headers }) =>
          headers['x-answer'] === 'refused'
            ? refused
            : headers['x-answer'] === 'refused-later'
              ? Promise.resolve(refused)
              : { status: 204, headers: {} },
      },
      {
        bodyLimitBytes: 1_024,
        docsBaseUrl: '/docs',
        log,
        closing: () => false,
        routes: new RouteMetrics(new Registry(), [1]),
      },
    )
    const server = fastRouteServerFactory([path])((_req, res) => res.end(), {})
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/authorize`
    try {
      for (const answer of ['refused', 'refused-later']) {
        await expect(request(url, { headers: { 'x-answer': answer } })).rejects.toThrow()
        const fine = await request(url)
        expect(fine.statusCode).toBe(204)
        await fine.body.dump()
      }
      expect(lines.filter((line) => line.includes('could not write the answer'))).toHaveLength(2)
    } finally {
      server.close()
    }
  })
})
