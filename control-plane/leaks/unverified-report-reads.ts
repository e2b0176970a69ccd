import type { Readable } from 'node:stream'
import { ApiError } from '../../shared/errors/errors.js'

/**
 * How report bodies are read before their signature can be checked. GitHub's key identifiers are public, so anyone
 * can send a report that names one: what such a report can hold is bounded in size, time and number.
 */
export interface ReportReadLimits {
  /** Largest a report body may be. */
  maxBytes: number
  /** Report bodies read at once; one more is answered 429 before its body is read. */
  concurrent: number
  /** Longest a report body may take to arrive (then 408, and the connection is closed). */
  deadlineMs: number
}

// GitHub batches matches, and sends them whole and fast: a report beyond a megabyte, or slower than 10 s, is not
// one of GitHub's. 16 bodies at once hold 16 MB at most.
export const DEFAULT_REPORT_READ_LIMITS: ReportReadLimits = {
  maxBytes: 1024 * 1024,
  concurrent: 16,
  deadlineMs: 10_000,
}

/** A place among the bodies being read; giving it back more than once gives it back once. */
export type ReadSlot = () => void

/** The report bodies being read at once, up to `max`. */
export class ReportReadSlots {
  private reading = 0

  /** `onChange` is told how many are being read after every change (the metric). */
  constructor(
    private readonly max: number,
    private readonly onChange: (reading: number) => void,
  ) {}

  /** A slot, or undefined when every one is taken. */
  take(): ReadSlot | undefined {
    if (this.reading >= this.max) return undefined
    this.onChange(++this.reading)
    let held = true
    return () => {
      if (!held) return
      held = false
      this.onChange(--this.reading)
    }
  }
}

/**
 * A report's body, read from `payload` whole: refused (413) past `maxBytes` — at once when the declared length says
 * so — and (408) when it has not arrived within `deadlineMs`. Both refusals close the connection: the rest of a body
 * that will not be read is not waited for.
 */
export function readReportBody(
  payload: Readable,
  declaredLength: string | undefined,
  limits: Pick<ReportReadLimits, 'maxBytes' | 'deadlineMs'>,
): Promise<Buffer> {
  const closing = { connection: 'close' }
  const tooLarge = () =>
    new ApiError('PAYLOAD_TOO_LARGE', `body: a leak report is at most ${limits.maxBytes} bytes`, closing)
  if (Number(declaredLength) > limits.maxBytes) return Promise.reject(tooLarge())
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const finish = (err: Error | undefined) => {
      clearTimeout(deadline)
      payload.off('data', onData)
      payload.off('end', onEnd)
      payload.off('error', finish)
      if (err) reject(err)
      else resolve(Buffer.concat(chunks))
    }
    const deadline = setTimeout(
      () =>
        finish(
          new ApiError('REQUEST_TIMEOUT', `a leak report's body must arrive within ${limits.deadlineMs} ms`, closing),
        ),
      limits.deadlineMs,
    )
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limits.maxBytes) finish(tooLarge())
      else chunks.push(chunk)
    }
    const onEnd = () => finish(undefined)
    payload.on('data', onData)
    payload.on('end', onEnd)
    payload.on('error', finish)
    payload.resume()
  })
}
