import type { ServerResponse } from 'node:http'
import type { Dispatcher } from 'undici'
import { clientResponseHeaders } from './proxy-headers.js'
import type { AnswerSource } from './proxy-metrics.js'

/** What the proxy does at the exchange's turning points (answering for an upstream that failed, counting). */
export interface ExchangeEnds {
  /** The upstream's status was passed on to the client. */
  answered(status: number): void
  /** The upstream failed before its answer could be passed on (no response started): answer the client for it. */
  failed(err: Error): void
  /** The upstream's headers cannot be passed on (the request is aborted): answer the client for it. */
  unpassable(err: unknown): void
}

class ClientLeft extends Error {
  constructor() {
    super('the client left before its answer was sent')
  }
}

class ClientStalled extends Error {
  constructor(ms: number) {
    super(`the client took none of its answer for ${ms} ms`)
  }
}

/**
 * One proxied request as an undici dispatch handler: the upstream's status and headers, then each chunk of its body,
 * written to the client's response as they arrive — no stream and no promise in between (undici's request() builds
 * both for every request) — the upstream paused while the client cannot take more. A client that leaves aborts the
 * upstream request; an upstream that fails before answering is answered for, after that the client's response is
 * cut short. A client that does not drain what is buffered for it within `stallMs` is cut off: undici does not time a
 * paused body, so a client that never reads would otherwise hold an upstream connection for good (nginx's
 * send_timeout, for the same reason). Only 'drain' shows progress, so the timer restarts per buffer taken, not per
 * byte: a client slower than one buffer (~16 KiB + a chunk) per `stallMs` is cut too.
 */
export class UpstreamExchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined
  /** waiting for the upstream's answer → relaying it → done (sent in full, or answered for, or the client left). */
  private state: 'waiting' | 'relaying' | 'done' = 'waiting'
  /** Who chose the answer the client gets: the upstream once its status was passed on. */
  source: AnswerSource = 'keygate'
  /** Runs while the upstream is paused for the client; cleared when the client takes more. */
  private stall: NodeJS.Timeout | undefined

  constructor(
    private readonly res: ServerResponse,
    private readonly requestId: string,
    private readonly ends: ExchangeEnds,
    private readonly stallMs: number,
  ) {}

  /** The client left before its answer was sent in full: the upstream request is aborted (now, or as it starts). */
  clientLeft(): void {
    if (this.state === 'done') return
    this.state = 'done'
    clearTimeout(this.stall)
    this.controller?.abort(new ClientLeft())
  }

  // Called again when undici retries the request on another connection: the latest controller is the one to abort.
  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller
    if (this.state === 'done') controller.abort(new ClientLeft())
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    // Informational answers (103 Early Hints …) are the upstream's hop: only the final one is passed on.
    if (statusCode < 200 || this.state !== 'waiting') return
    try {
      this.res.writeHead(statusCode, clientResponseHeaders(headers, this.requestId))
    } catch (err) {
      this.state = 'done'
      controller.abort(err instanceof Error ? err : new Error(String(err)))
      this.ends.unpassable(err)
      return
    }
    this.state = 'relaying'
    this.source = 'upstream'
    this.ends.answered(statusCode)
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.state !== 'relaying') return
    if (!this.res.write(chunk)) {
      controller.pause()
      // A pipelined answer waiting behind the ones before it has no socket yet, and its client is busy taking those:
      // its time starts with its turn (node:http then flushes what it holds, and 'drain' follows if all of it went).
      if (this.res.socket === null) this.res.once('socket', () => this.timeStall(controller))
      else this.timeStall(controller)
      this.res.once('drain', () => {
        clearTimeout(this.stall)
        controller.resume()
      })
    }
  }

  private timeStall(controller: Dispatcher.DispatchController): void {
    if (this.state !== 'relaying') return
    this.stall = setTimeout(() => this.clientStalled(controller), this.stallMs).unref()
  }

  /** The client took nothing for stallMs: its response is cut short and the upstream request aborted. */
  private clientStalled(controller: Dispatcher.DispatchController): void {
    if (this.state !== 'relaying') return
    this.state = 'done'
    controller.abort(new ClientStalled(this.stallMs))
    this.res.destroy()
  }

  onResponseEnd(): void {
    if (this.state !== 'relaying') return
    this.state = 'done'
    // The end can arrive with the last chunk, while paused: the upstream is done with, whatever the client does.
    clearTimeout(this.stall)
    this.res.end()
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    const state = this.state
    this.state = 'done'
    clearTimeout(this.stall)
    if (state === 'waiting') this.ends.failed(err)
    // Mid-body: the client's response cannot be answered for any more, only cut short.
    else if (state === 'relaying') this.res.destroy()
  }
}
