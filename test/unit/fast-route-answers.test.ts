import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { Registry } from 'prom-client'
import { request } from 'undici'
import { capturedLogger } from '../support/apps.js'
import { frozenWithMemo } from '../../shared/frozen-memo.js'
import { fastJsonPath, fastRouteServerFactory } from '../../shared/http/fast-route.js'
import { RouteMetrics } from '../../shared/http/route-metrics.js'

/**
 * Only an answer frozen with a memo (shared/frozen-memo.ts) is serialised once and kept, in its memo: an answer that is
 * not frozen may be the same object changed since, and one merely frozen has nowhere to keep it; both are serialised
 * each time they are answered. Reads of `name` (a getter) count the serialisations.
 */
describe('a JSON fast path answering the same object twice', () => {
  it('serialises a non-frozen or merely frozen answer afresh each time, a memoised one once', async () => {
    const mutable = { name: 'first' }
    const reads = { frozen: 0, memoised: 0 }
    const counted = (which: keyof typeof reads, name: string) => ({
      get name() {
        reads[which]++
        return name
      },
    })
    const answers: Record<string, object> = {
      mutable,
      frozen: Object.freeze(counted('frozen', 'frozen')),
      memoised: frozenWithMemo(counted('memoised', 'kept')),
    }
    const path = fastJsonPath(
      {
        url: '/v1/answer',
        bodySchema: { type: 'object', properties: { which: { type: 'string' } }, required: ['which'] },
        responseSchema: {
          type: 'object',
          properties: { name: { type: 'string' }, requestId: { type: 'string' } },
        },
        handle: (body) => answers[(body as { which: string }).which],
      },
      {
        bodyLimitBytes: 1_024,
        docsBaseUrl: '/docs',
        log: capturedLogger().log,
        closing: () => false,
        routes: new RouteMetrics(new Registry(), [1]),
      },
    )
    const server = fastRouteServerFactory([path])((_req, res) => res.end(), {})
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/answer`
    const ask = async (which: string) => {
      const response = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ which }),
      })
      const text = await response.body.text()
      expect(response.headers['content-length']).toBe(String(Buffer.byteLength(text)))
      return (JSON.parse(text) as { name: string }).name
    }
    try {
      expect(await ask('mutable')).toBe('first')
      mutable.name = 'second, longer ü'
      expect(await ask('mutable')).toBe('second, longer ü')
      expect(await ask('frozen')).toBe('frozen')
      expect(await ask('frozen')).toBe('frozen')
      expect(reads.frozen).toBe(2)
      expect(await ask('memoised')).toBe('kept')
      expect(await ask('memoised')).toBe('kept')
      expect(reads.memoised).toBe(1)
    } finally {
      server.close()
    }
  })

  it("keeps each route's serialisation of a memoised answer apart: other schemas answer it their own way", async () => {
    // One memoised object may be answered by several routes (NOT_FOUND is one object for every server in a process).
    const answer = frozenWithMemo({ name: 'kept', extra: 'only in the wide schema' })
    const context = {
      bodyLimitBytes: 1_024,
      docsBaseUrl: '/docs',
      log: capturedLogger().log,
      closing: () => false,
      routes: new RouteMetrics(new Registry(), [1]),
    }
    function route(url: string, properties: object) {
      return fastJsonPath(
        {
          url,
          bodySchema: { type: 'object' },
          responseSchema: { type: 'object', properties: { ...properties, requestId: { type: 'string' } } },
          handle: () => answer,
        },
        context,
      )
    }
    const name = { name: { type: 'string' } }
    const server = fastRouteServerFactory([
      route('/v1/narrow', name),
      route('/v1/wide', { ...name, extra: { type: 'string' } }),
    ])((_req, res) => res.end(), {})
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const ask = async (url: string) => {
      const response = await request(`${base}${url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'id' },
        body: '{}',
      })
      return JSON.parse(await response.body.text()) as unknown
    }
    try {
      for (let pass = 0; pass < 2; pass++) {
        expect(await ask('/v1/narrow')).toStrictEqual({ name: 'kept', requestId: 'id' })
        expect(await ask('/v1/wide')).toStrictEqual({ name: 'kept', extra: 'only in the wide schema', requestId: 'id' })
      }
    } finally {
      server.close()
    }
  })
})
