import { Writable } from 'node:stream'

/** A pino record as it arrives on the stream: one JSON object per line. */
interface LogRecord {
  level?: number
  time?: number
  msg?: string
  /** Fastify's request id (its log label is `requestId`: shared/http/build-server.ts). */
  requestId?: string
  req?: { method?: string; url?: string }
  res?: { statusCode?: number }
  responseTime?: number
  err?: { message?: string }
  [field: string]: unknown
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' }
const MAX_IN_FLIGHT = 500
/** Fields every record carries: left out of the readable line. */
const ROUTINE = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'requestId'])

export interface ReadableLogLines extends Writable {
  /**
   * Start-up is over (the banner is out): from now on every line is printed. Until then routine lines (below WARN)
   * are left out: they are the servers' own book-keeping, and the banner says what a person needs to know.
   */
  startedUp(): void
}

/**
 * `keygate dev`'s log, for a person at a terminal: one readable line per request ("12:00:01 POST
 * /v1/apis.createApi 200 (1.9 ms)") and per other event, instead of pino's JSON. Fastify logs a request twice
 * (incoming, completed); the first is held by request id and printed with the second. The records are already
 * redacted by the logger (shared/logger.ts): this only lays them out.
 */
export function readableLogLines(out: NodeJS.WritableStream): ReadableLogLines {
  const incoming = new Map<string, string>()
  let pending = ''
  let startingUp = true
  const lines = new Writable({
    write(chunk: Buffer, _encoding, done) {
      pending += chunk.toString('utf8')
      let newline: number
      while ((newline = pending.indexOf('\n')) >= 0) {
        const line = lineOf(pending.slice(0, newline), incoming, startingUp)
        pending = pending.slice(newline + 1)
        if (line !== undefined) out.write(`${line}\n`)
      }
      done()
    },
  })
  return Object.assign(lines, { startedUp: () => void (startingUp = false) })
}

function lineOf(json: string, incoming: Map<string, string>, startingUp: boolean): string | undefined {
  let record: LogRecord
  try {
    record = JSON.parse(json) as LogRecord
  } catch {
    return json
  }
  if (startingUp && (record.level ?? 30) < 40) return undefined
  const time = new Date(record.time ?? Date.now()).toTimeString().slice(0, 8)
  const id = record.requestId
  if (record.msg === 'incoming request' && id !== undefined) {
    incoming.set(id, `${record.req?.method ?? '?'} ${record.req?.url ?? '?'}`)
    // A request that never completes (the client left) must not be held for ever: keep the newest few hundred.
    if (incoming.size > MAX_IN_FLIGHT) incoming.delete(incoming.keys().next().value!)
    return undefined
  }
  if (record.msg === 'request completed' && id !== undefined) {
    const request = incoming.get(id) ?? 'request'
    incoming.delete(id)
    const ms = record.responseTime === undefined ? '' : ` (${record.responseTime.toFixed(1)} ms)`
    return `${time} ${request} ${record.res?.statusCode ?? ''}${ms}`
  }
  const level = LEVELS[record.level ?? 30] ?? 'INFO'
  const fields = Object.entries(record)
    .filter(([name]) => !ROUTINE.has(name))
    .map(([name, value]) => `${name}=${name === 'err' ? (record.err?.message ?? '') : JSON.stringify(value)}`)
  return [time, level, record.msg ?? '', ...fields].join(' ').trimEnd()
}
