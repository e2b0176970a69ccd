import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import type { LoadResult, SlowRequests } from './load.js'
import { percentile } from './stats.js'

/**
 * An open-loop load at a fixed rate, its latency to the microsecond: request i is sent at start + i ÷ rate,
 * whether or not earlier ones were answered, on the first of `connections` keep-alive sockets with none in flight
 * (else pipelined on the least busy one). Each latency runs from the request's write to the end of its answer.
 *
 * Why not autocannon's `overallRate`: each of its connections sends its share of a second as fast as it is
 * answered and then waits for the next second (a per-second counter), so "10,000 req/s" is a saturating burst
 * at the start of every second, and its histogram counts whole milliseconds. Why not undici (latency-worker):
 * at 10,000 req/s its client work per request makes the load core itself the tail, the same for every server.
 * This client does nearly nothing per request: the requests are bytes built once, and an answer is found by its
 * Content-Length. It spins (setImmediate) between sends to keep time to the microsecond: it owns the load core
 * meanwhile, which is what that core is for.
 *
 * Reads a PacedPlan from the file named by argv[2]; prints a LoadResult (ms) as JSON on stdout.
 */
export interface PacedPlan {
  url: string
  path: string
  bodies: string[]
  headers?: Record<string, string>
  connections: number
  rate: number
  /** Sent first at the same rate and not counted: the client's own code is compiled and its heap settled by then. */
  warmupSeconds: number
  durationSeconds: number
  /**
   * Report the requests of the counted part slower than this (ms) one by one, with when each was written: a bench
   * can then tell which of them a pause of the server held (bench:tail). Unset: none are reported.
   */
  slowOverMs?: number
}

const plan = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as PacedPlan
const target = new URL(plan.url)
const extraHeaders = Object.entries(plan.headers ?? {})
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('')
const requests = plan.bodies.map((body) =>
  Buffer.from(
    `POST ${plan.path} HTTP/1.1\r\nhost: ${target.host}\r\ncontent-type: application/json\r\n${extraHeaders}` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  ),
)

const HEADER_END = Buffer.from('\r\n\r\n')
const CONTENT_LENGTH = [Buffer.from('\r\ncontent-length:'), Buffer.from('\r\nContent-Length:')]
/** Every socket reads into this one buffer (net's `onread`): no buffer is allocated per read. */
const readBuffer = Buffer.alloc(256 * 1024)
/** Most requests in flight on one connection (each holds one at a time but for a stall's backlog). */
const MAX_IN_FLIGHT = 4096

/** The length of the body an answer's head announces, from its bytes (no string is made), or -1. */
function contentLength(data: Buffer, headerEnd: number): number {
  for (const name of CONTENT_LENGTH) {
    let at = data.indexOf(name)
    if (at < 0 || at > headerEnd) continue
    at += name.length
    while (data[at] === 0x20) at++
    let length = 0
    for (let digit = data[at]! - 0x30; digit >= 0 && digit <= 9; digit = data[++at]! - 0x30)
      length = length * 10 + digit
    return length
  }
  return -1
}

/** One keep-alive connection; the write times of its requests in flight, answered in order, in a ring. */
class Connection {
  readonly socket: Socket
  /** When each request in flight was written, and its place in the schedule. */
  private readonly sentAt = new Float64Array(MAX_IN_FLIGHT)
  private readonly sequence = new Float64Array(MAX_IN_FLIGHT)
  private first = 0
  inFlight = 0
  /** The start of an answer that a read cut off, kept until the rest arrives (rare: answers are small). */
  private carried: Buffer | undefined

  /** `sentAt`: when the request was written (performance.now()), for a caller that reports it. */
  constructor(
    private readonly onAnswer: (status: number, latencyMs: number, sequence: number, sentAt: number) => void,
  ) {
    this.socket = connect({
      port: Number(target.port),
      host: target.hostname,
      noDelay: true,
      onread: {
        buffer: readBuffer,
        callback: (length) => {
          this.read(readBuffer, length)
          return true
        },
      },
    })
    this.socket.on('error', (err) => fail(`connection error: ${err.message}`))
  }

  send(request: Buffer, sequence: number): void {
    if (this.inFlight === MAX_IN_FLIGHT) fail('too many requests in flight on one connection')
    const slot = (this.first + this.inFlight++) % MAX_IN_FLIGHT
    this.sequence[slot] = sequence
    this.sentAt[slot] = performance.now()
    this.socket.write(request)
  }

  private read(buffer: Buffer, length: number): void {
    let data = buffer
    let end = length
    if (this.carried) {
      data = Buffer.concat([this.carried, buffer.subarray(0, length)])
      end = data.length
      this.carried = undefined
    }
    let at = 0
    while (at < end) {
      const headerEnd = data.indexOf(HEADER_END, at)
      // The buffer beyond `end` holds an earlier read's bytes: the whole separator must be this read's.
      if (headerEnd < 0 || headerEnd + HEADER_END.length > end) break
      const bodyLength = contentLength(data.subarray(at, headerEnd), headerEnd - at)
      if (bodyLength < 0) fail(`an answer without Content-Length: ${data.toString('latin1', at, at + 40)}`)
      const answerEnd = headerEnd + HEADER_END.length + bodyLength
      if (answerEnd > end) break
      const status = (data[at + 9]! - 0x30) * 100 + (data[at + 10]! - 0x30) * 10 + (data[at + 11]! - 0x30)
      const slot = this.first
      this.first = (this.first + 1) % MAX_IN_FLIGHT
      this.inFlight--
      this.onAnswer(status, performance.now() - this.sentAt[slot]!, this.sequence[slot]!, this.sentAt[slot]!)
      at = answerEnd
    }
    // Copied: the read buffer is reused by the next read, on any socket.
    if (at < end) this.carried = Buffer.from(data.subarray(at, end))
  }
}

function fail(message: string): never {
  process.stderr.write(`paced-worker: ${message}\n`)
  process.exit(1)
}

const warmup = Math.ceil(plan.rate * plan.warmupSeconds)
const expected = warmup + Math.ceil(plan.rate * plan.durationSeconds)
/** Each request's latency by its place in the schedule, warm-up included (NaN until answered). */
const latencies = new Float64Array(expected).fill(Number.NaN)
let answered = 0
let non2xx = 0
const slowOverMs = plan.slowOverMs ?? Number.POSITIVE_INFINITY
/** Each slow answer's place in the schedule and its write time (ms since the epoch), warm-up included. */
const slowSequences: number[] = []
const slowSentAt: number[] = []
const connections = Array.from(
  { length: plan.connections },
  () =>
    new Connection((status, latencyMs, sequence, sentAt) => {
      answered++
      if (status < 200 || status > 299) non2xx++
      // Warm-up answers take exactly this path too (their latencies are dropped at the end): a branch first taken
      // when the warm-up ends would have V8 compile code again inside the measured window, stalling the client.
      latencies[sequence] = latencyMs
      if (latencyMs > slowOverMs) {
        slowSequences.push(sequence)
        slowSentAt.push(performance.timeOrigin + sentAt)
      }
    }),
)
await Promise.all(connections.map((c) => new Promise((resolve) => c.socket.once('connect', resolve))))

const intervalMs = 1000 / plan.rate
const started = performance.now()
let sent = 0

/** Sends every request whose time has come, then comes back at once until all are sent. */
function tick(): void {
  const due = Math.min(expected, Math.floor((performance.now() - started) / intervalMs) + 1)
  for (; sent < due; sent++) {
    let chosen = connections[0]!
    for (const connection of connections) {
      if (connection.inFlight < chosen.inFlight) chosen = connection
      if (chosen.inFlight === 0) break
    }
    chosen.send(requests[sent % requests.length]!, sent)
  }
  if (sent < expected) setImmediate(tick)
}
tick()

const deadline = started + (plan.warmupSeconds + plan.durationSeconds) * 1000 + 5_000
await new Promise<void>((resolve) => {
  const check = () => (answered === expected || performance.now() > deadline ? resolve() : setTimeout(check, 5))
  check()
})
for (const connection of connections) connection.socket.destroy()
const sample = Array.from(latencies.subarray(warmup)).filter((latency) => !Number.isNaN(latency))
let slow: SlowRequests | undefined
if (plan.slowOverMs !== undefined) {
  const counted = slowSequences.flatMap((sequence, i) => (sequence >= warmup ? [i] : []))
  const countedFrom = performance.timeOrigin + started + warmup * intervalMs
  slow = {
    overMs: plan.slowOverMs,
    fromEpochMs: countedFrom,
    toEpochMs: countedFrom + plan.durationSeconds * 1000,
    sentAtEpochMs: counted.map((i) => slowSentAt[i]!),
    latencyMs: counted.map((i) => latencies[slowSequences[i]!]!),
  }
}
process.stdout.write(
  JSON.stringify({
    // Over the whole schedule, warm-up included, as is `total`: a caller timing the server's CPU over this run
    // divides by every answer in it; the latencies are the counted part's alone.
    rps: answered / (plan.warmupSeconds + plan.durationSeconds),
    p50: percentile(sample, 50),
    p99: percentile(sample, 99),
    max: percentile(sample, 100),
    total: answered,
    non2xx,
    errors: expected - answered,
    slow,
  } satisfies LoadResult),
)
