import { EventEmitter } from 'node:events'
import type { ServerResponse } from 'node:http'
import type { Dispatcher } from 'undici'
import { describe, expect, it, vi } from 'vitest'
import { UpstreamExchange } from '../../verifier/upstream-exchange.js'

/**
 * The exchange driven by hand, as undici drives a dispatch handler, against a response that records what it is told:
 * the turns no real upstream reaches on demand (headers node:http refuses after undici accepted them, undici retrying
 * on another connection, calls arriving after the client left).
 */
function exchangeOn({ writeHead }: { writeHead?: () => void } = {}) {
  const res = Object.assign(new EventEmitter(), {
    calls: [] as string[],
    writable: true,
    writeHead: vi.fn((status: number) => {
      writeHead?.()
      res.calls.push(`head ${status}`)
    }),
    write: vi.fn((chunk: Buffer) => {
      res.calls.push(`data ${String(chunk)}`)
      return res.writable
    }),
    end: vi.fn(() => res.calls.push('end')),
    destroy: vi.fn(() => res.calls.push('destroy')),
  })
  const ends = { answered: vi.fn(), failed: vi.fn(), unpassable: vi.fn() }
  const exchange = new UpstreamExchange(res as unknown as ServerResponse, 'req_1', ends, 1_000)
  return { res, ends, exchange }
}

/** A controller whose abort() reports the error to the handler at once, as undici's does (through onError). */
function controller(exchange: UpstreamExchange) {
  const c = {
    abort: vi.fn((reason: Error) => exchange.onResponseError(c as unknown as Dispatcher.DispatchController, reason)),
    pause: vi.fn(),
    resume: vi.fn(),
  }
  return c as Omit<Dispatcher.DispatchController, keyof typeof c> & typeof c
}

describe('UpstreamExchange', () => {
  it('relays the final answer only (not 1xx), with the request id, counted once, then its body and its end', () => {
    const { res, ends, exchange } = exchangeOn()
    const c = controller(exchange)
    exchange.onRequestStart(c)
    exchange.onResponseStart(c, 103, { link: '</a.css>' })
    exchange.onResponseStart(c, 200, { 'x-up': 'yes', 'x-request-id': 'upstream-id', connection: 'close' })
    exchange.onResponseData(c, Buffer.from('a'))
    exchange.onResponseEnd()
    exchange.onResponseError(c, new Error('late'))
    expect(res.calls).toEqual(['head 200', 'data a', 'end'])
    expect(res.writeHead).toHaveBeenCalledWith(200, { 'x-up': 'yes', 'x-request-id': 'req_1' })
    expect(ends.answered.mock.calls).toEqual([[200]])
    expect([ends.failed, ends.unpassable, c.abort].map((fn) => fn.mock.calls.length)).toEqual([0, 0, 0])
    expect(exchange.source).toBe('upstream')
  })

  it('answers for headers node:http refuses: the upstream request aborted, the answer Keygate’s, nothing after it', () => {
    const refused = new TypeError('Invalid character in header content ["x-bad"]')
    const { res, ends, exchange } = exchangeOn({
      writeHead: () => {
        throw refused
      },
    })
    const c = controller(exchange)
    exchange.onRequestStart(c)
    exchange.onResponseStart(c, 200, { 'x-bad': 'a\u0001b' })
    expect(c.abort.mock.calls).toEqual([[refused]])
    expect(ends.unpassable.mock.calls).toEqual([[refused]])
    expect(ends.answered).not.toHaveBeenCalled()
    expect(exchange.source).toBe('keygate')
    // undici reports the abort, and anything else still on its way, to a handler that is done.
    exchange.onResponseError(c, refused)
    exchange.onResponseData(c, Buffer.from('ok'))
    exchange.onResponseEnd()
    expect(res.calls).toEqual([])
    expect(ends.failed).not.toHaveBeenCalled()
  })

  it('answers for an upstream that fails before its answer, and only cuts a response it fails in the middle of', () => {
    const before = exchangeOn()
    const err = new Error('ECONNREFUSED')
    before.exchange.onResponseError(undefined as unknown as Dispatcher.DispatchController, err)
    before.exchange.onResponseError(undefined as unknown as Dispatcher.DispatchController, err)
    expect(before.ends.failed.mock.calls).toEqual([[err]])
    expect(before.res.calls).toEqual([])

    const during = exchangeOn()
    const c = controller(during.exchange)
    during.exchange.onRequestStart(c)
    during.exchange.onResponseStart(c, 200, {})
    during.exchange.onResponseData(c, Buffer.from('par'))
    during.exchange.onResponseError(c, new Error('socket hang up'))
    expect(during.res.calls).toEqual(['head 200', 'data par', 'destroy'])
    expect(during.ends.failed).not.toHaveBeenCalled()
  })

  it('aborts the upstream request when the client leaves, at any stage, and answers nothing for it afterwards', () => {
    // While waiting for the answer: aborted now; what undici reports afterwards is not answered for.
    const waiting = exchangeOn()
    const c = controller(waiting.exchange)
    waiting.exchange.onRequestStart(c)
    waiting.exchange.clientLeft()
    waiting.exchange.clientLeft()
    expect(c.abort).toHaveBeenCalledTimes(1)
    waiting.exchange.onResponseError(c, c.abort.mock.calls[0]![0])
    waiting.exchange.onResponseStart(c, 200, {})
    waiting.exchange.onResponseData(c, Buffer.from('x'))
    waiting.exchange.onResponseEnd()
    expect(waiting.res.calls).toEqual([])
    expect([waiting.ends.failed, waiting.ends.answered].map((fn) => fn.mock.calls.length)).toEqual([0, 0])

    // Before the request started (waiting for a pool connection): aborted as it starts.
    const queued = exchangeOn()
    queued.exchange.clientLeft()
    const late = controller(queued.exchange)
    queued.exchange.onRequestStart(late)
    expect(late.abort).toHaveBeenCalledTimes(1)
    expect(queued.ends.failed).not.toHaveBeenCalled()

    // Mid-body: aborted; the response is the server's to close.
    const relaying = exchangeOn()
    const r = controller(relaying.exchange)
    relaying.exchange.onRequestStart(r)
    relaying.exchange.onResponseStart(r, 200, {})
    relaying.exchange.clientLeft()
    relaying.exchange.onResponseData(r, Buffer.from('x'))
    expect(r.abort).toHaveBeenCalledTimes(1)
    expect(relaying.res.calls).toEqual(['head 200'])

    // After the answer was sent in full: nothing to abort.
    const sent = exchangeOn()
    const s = controller(sent.exchange)
    sent.exchange.onRequestStart(s)
    sent.exchange.onResponseStart(s, 204, {})
    sent.exchange.onResponseEnd()
    sent.exchange.clientLeft()
    expect(s.abort).not.toHaveBeenCalled()
  })

  it('aborts the request undici retried on another connection (the latest controller), not the first one', () => {
    const { exchange } = exchangeOn()
    const first = controller(exchange)
    const retried = controller(exchange)
    exchange.onRequestStart(first)
    exchange.onRequestStart(retried)
    exchange.clientLeft()
    expect(first.abort).not.toHaveBeenCalled()
    expect(retried.abort).toHaveBeenCalledTimes(1)
  })

  it('pauses the upstream while the client cannot take more and resumes it on drain, one listener at a time', () => {
    const { res, exchange } = exchangeOn()
    const c = controller(exchange)
    exchange.onRequestStart(c)
    exchange.onResponseStart(c, 200, {})
    for (let round = 0; round < 20; round++) {
      res.writable = false
      exchange.onResponseData(c, Buffer.from(String(round)))
      expect(c.pause).toHaveBeenCalledTimes(round + 1)
      expect(res.listenerCount('drain')).toBe(1)
      expect(c.resume).toHaveBeenCalledTimes(round)
      res.writable = true
      res.emit('drain')
      expect(c.resume).toHaveBeenCalledTimes(round + 1)
      expect(res.listenerCount('drain')).toBe(0)
    }
    exchange.onResponseData(c, Buffer.from('more'))
    expect(c.pause).toHaveBeenCalledTimes(20)
  })

  it('cuts off a client that takes nothing for the stall time (upstream aborted), never one that keeps reading', () => {
    vi.useFakeTimers()
    try {
      const { res, ends, exchange } = exchangeOn()
      const c = controller(exchange)
      exchange.onRequestStart(c)
      exchange.onResponseStart(c, 200, {})
      // Reading, slowly: each pause ends in a drain before the stall time, however long the whole takes.
      for (let round = 0; round < 5; round++) {
        res.writable = false
        exchange.onResponseData(c, Buffer.from(String(round)))
        vi.advanceTimersByTime(900)
        res.writable = true
        res.emit('drain')
      }
      vi.advanceTimersByTime(5_000)
      expect(c.abort).not.toHaveBeenCalled()
      expect(res.destroy).not.toHaveBeenCalled()
      // Then nothing taken for the stall time: the response is cut short and the upstream request aborted, once.
      res.writable = false
      exchange.onResponseData(c, Buffer.from('last'))
      vi.advanceTimersByTime(999)
      expect(c.abort).not.toHaveBeenCalled()
      vi.advanceTimersByTime(1)
      expect(c.abort).toHaveBeenCalledTimes(1)
      expect(String(c.abort.mock.calls[0]![0].message)).toMatch(/took none of its answer for 1000 ms/)
      expect(res.calls.at(-1)).toBe('destroy')
      exchange.clientLeft()
      expect(c.abort).toHaveBeenCalledTimes(1)
      expect([ends.failed, ends.unpassable].map((fn) => fn.mock.calls.length)).toEqual([0, 0])
    } finally {
      vi.useRealTimers()
    }
  })

  it('re-arms the stall timer for a pause that starts inside resume() (undici hands over buffered data at once)', () => {
    vi.useFakeTimers()
    try {
      const { res, exchange } = exchangeOn()
      const c = controller(exchange)
      // undici's resume() runs its parser on what the socket already holds before returning: the next chunk arrives,
      // and can pause the upstream again, inside the 'drain' listener. That pause's timer must survive the listener.
      c.resume.mockImplementationOnce(() => exchange.onResponseData(c, Buffer.from('buffered')))
      exchange.onRequestStart(c)
      exchange.onResponseStart(c, 200, {})
      res.writable = false
      exchange.onResponseData(c, Buffer.from('first'))
      vi.advanceTimersByTime(900)
      res.emit('drain')
      expect(c.pause).toHaveBeenCalledTimes(2)
      // The first pause's timer is gone with its drain; the second pause has a full stall time of its own.
      expect(vi.getTimerCount()).toBe(1)
      vi.advanceTimersByTime(999)
      expect(c.abort).not.toHaveBeenCalled()
      vi.advanceTimersByTime(1)
      expect(c.abort).toHaveBeenCalledTimes(1)
      expect(res.calls).toEqual(['head 200', 'data first', 'data buffered', 'destroy'])
    } finally {
      vi.useRealTimers()
    }
  })

  it('never times a client that takes each chunk as it comes, however long the upstream takes between them', () => {
    vi.useFakeTimers()
    try {
      const { res, exchange } = exchangeOn()
      const c = controller(exchange)
      exchange.onRequestStart(c)
      exchange.onResponseStart(c, 200, {})
      // A slow upstream is the upstream timeout's business (undici's bodyTimeout), not the stall timer's: with the
      // upstream never paused there is no timer at all.
      for (let round = 0; round < 5; round++) {
        exchange.onResponseData(c, Buffer.from(String(round)))
        expect(vi.getTimerCount(), `round ${round}`).toBe(0)
        vi.advanceTimersByTime(900)
      }
      exchange.onResponseEnd()
      expect(c.abort).not.toHaveBeenCalled()
      expect(res.calls).toEqual(['head 200', 'data 0', 'data 1', 'data 2', 'data 3', 'data 4', 'end'])
    } finally {
      vi.useRealTimers()
    }
  })

  it('leaves no stall timer behind an exchange that ended while paused, or whose client left', () => {
    vi.useFakeTimers()
    try {
      for (const finish of ['end', 'left', 'error'] as const) {
        const { res, exchange } = exchangeOn()
        const c = controller(exchange)
        exchange.onRequestStart(c)
        exchange.onResponseStart(c, 200, {})
        res.writable = false
        exchange.onResponseData(c, Buffer.from('x'))
        expect(vi.getTimerCount(), finish).toBe(1)
        if (finish === 'end') exchange.onResponseEnd()
        else if (finish === 'left') exchange.clientLeft()
        else exchange.onResponseError(c, new Error('upstream died'))
        expect(vi.getTimerCount(), finish).toBe(0)
      }
    } finally {
      vi.useRealTimers()
    }
  })
})
