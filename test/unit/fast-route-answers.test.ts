import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { Registry } from 'prom-client'
import { request } from 'undici'
import { capturedLogger } from '../support/apps.js'
import { frozenWithMemo } from '../../shared/frozen-memo.js'
import { fastJsonPath, fastRouteServerFactory } from '../../shared/http/fast-route.js'
import { RouteMetrics } from '../../shared/http/route-metrics.js'
import type { Route } from '../../shared/http/route.js'

/** A JSON route at `url` answering what `handle` returns, in the shape `response` serialises. */
const testRoute = (url: string, response: object, handle: Route['handle'], input: object = { type: 'object' }) =>
  fastJsonPath(
    {
      id: 'answer',
      method: 'POST',
      doc: { summary: 'a test route', rootKey: false, tag: 'health' },
      url,
      input,
      response,
      handle,
    },
    {
      bodyLimitBytes: 1_024,
      docsBaseUrl: '/docs',
      log: capturedLogger().log,
      closing: () => false,
      routes: new RouteMetrics(new Registry(), [1]),
    },
  )

/** Serves `paths` on a free port: `ask` posts a body (and a request id) to one of them and reads the answer. */
async function serving(paths: ReturnType<typeof fastJsonPath>[]) {
  const server = fastRouteServerFactory(paths)((_req, res) => res.end(), {})
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const ask = async (url: string, body: object, requestId?: string) => {
    const response = await request(`${base}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(requestId && { 'x-request-id': requestId }) },
      body: JSON.stringify(body),
    })
    const text = await response.body.text()
    expect(response.headers['content-length']).toBe(String(Buffer.byteLength(text)))
    return JSON.parse(text) as Record<string, unknown>
  }
  return { ask, close: () => server.close() }
}

const WHICH = { type: 'object', properties: { which: { type: 'string' } }, required: ['which'] }

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
    const { ask: post, close } = await serving([
      testRoute(
        '/v1/answer',
        { type: 'object', properties: { name: { type: 'string' }, requestId: { type: 'string' } } },
        (body: { which: string }) => answers[body.which],
        WHICH,
      ),
    ])
    const ask = async (which: string) => (await post('/v1/answer', { which })).name
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
      close()
    }
  })

  it("serialises a v2 answer's memoised data once, though each answer wraps it anew", async () => {
    // v2 handlers answer `{data}`: the wrapper is new each time, the data may be the same memoised object.
    const reads = { frozen: 0, memoised: 0 }
    const counted = (which: keyof typeof reads, name: string) => ({
      get name() {
        reads[which]++
        return name
      },
    })
    const datas: Record<string, object> = {
      frozen: Object.freeze(counted('frozen', 'frozen')),
      memoised: frozenWithMemo(counted('memoised', 'kept')),
    }
    const { ask: post, close } = await serving([
      testRoute(
        '/v2/answer',
        {
          type: 'object',
          properties: {
            meta: { type: 'object', properties: { requestId: { type: 'string' } } },
            data: { type: 'object', properties: { name: { type: 'string' } } },
          },
        },
        (body: { which: string }) => ({ data: datas[body.which] }),
        WHICH,
      ),
    ])
    const ask = (which: string) => post('/v2/answer', { which }, `req_${which}`)
    try {
      for (let pass = 0; pass < 2; pass++) {
        expect(await ask('frozen')).toStrictEqual({ meta: { requestId: 'req_frozen' }, data: { name: 'frozen' } })
        expect(await ask('memoised')).toStrictEqual({ meta: { requestId: 'req_memoised' }, data: { name: 'kept' } })
      }
      expect(reads).toEqual({ frozen: 2, memoised: 1 })
    } finally {
      close()
    }
  })

  it("keeps each route's serialisation of a memoised answer apart: other schemas answer it their own way", async () => {
    // One memoised object may be answered by several routes (NOT_FOUND is one object for every server in a process).
    const answer = frozenWithMemo({ name: 'kept', extra: 'only in the wide schema' })
    const route = (url: string, properties: object) =>
      testRoute(url, { type: 'object', properties: { ...properties, requestId: { type: 'string' } } }, () => answer)
    const name = { name: { type: 'string' } }
    const { ask: post, close } = await serving([
      route('/v1/narrow', name),
      route('/v1/wide', { ...name, extra: { type: 'string' } }),
    ])
    const ask = (url: string) => post(url, {}, 'id')
    try {
      for (let pass = 0; pass < 2; pass++) {
        expect(await ask('/v1/narrow')).toStrictEqual({ name: 'kept', requestId: 'id' })
        expect(await ask('/v1/wide')).toStrictEqual({ name: 'kept', extra: 'only in the wide schema', requestId: 'id' })
      }
    } finally {
      close()
    }
  })
})
