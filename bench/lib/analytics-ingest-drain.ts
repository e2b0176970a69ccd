import { pino } from 'pino'
import { Registry } from 'prom-client'
import { AnalyticsRecorder } from '../../shared/analytics/analytics-recorder.js'
import {
  appendVerificationLines,
  readBatch,
  VERIFICATION_COLUMNS,
  type EncodedBatch,
} from '../../shared/analytics/analytics-batch.js'
import {
  ANALYTICS_BUFFER_SHARDS,
  type AnalyticsBufferStore,
} from '../../shared/store/analytics-buffer/analytics-buffer-store.js'
import type { AnalyticsEngine } from '../../control-plane/analytics/engine/analytics-engine.js'
import { KEY_VERIFICATIONS, KEY_VERIFICATION_ROLLUPS } from '../../control-plane/analytics/engine/analytics-tables.js'
import { AnalyticsIngest } from '../../control-plane/analytics/ingest/analytics-ingest.js'
import { WORKSPACE_ID } from '../../control-plane/workspace.js'
import { processCpuSeconds } from './process-cpu.js'
import { progress } from './rounds.js'
import { regionsOf, sample, type Traffic } from './verification-traffic.js'

/** A verifier's flush: 2 s of a verifier answering 10,000 verifications a second. */
export const ROWS_PER_BATCH = 20_000
const FLUSH_MS = 2_000
/** How long the merges an ingest set off may take to end before the CPU they cost is read anyway, ms. */
const MERGES_WAIT_MS = 60_000

export interface IngestDrain {
  rows: number
  batches: number
  /** Bytes the batches took in the buffer (their JSON). */
  bufferBytes: number
  /** From the first look at the buffers to the last insert's end. */
  seconds: number
  /** This process's utime + stime over the drain (the ingest's JavaScript and the engine's threads), s. */
  cpuSeconds: number
  /** The same, until the merges of parts the drain set off had ended (or MERGES_WAIT_MS passed), s. */
  cpuSecondsWithMerges: number
  /** Whether those merges ended within MERGES_WAIT_MS. */
  mergesEnded: boolean
  /** The store's Redis over the drain, s. */
  redisCpuSeconds: number
  /** Parts of the drain's CPU, each measured again alone on the same batches, s. */
  parts: {
    /** Reading the batches, as the ingest does (JSON.parse, readBatch: their rows unpacked). */
    decode: number
    /** Writing their rows as the engine's insert lines (appendVerificationLines), as the ingest does. */
    encode: number
    /** The engine's insert of those lines (joined into its text) into a copy of the raw table that feeds no view. */
    rawInsert: number
  }
}

/** The ingest's inserts, rows (analytics-ingest.ts' ROWS_PER_INSERT). */
const ROWS_PER_INSERT = 100_000
/** A copy of the raw table that feeds no view: what inserting the rows costs without the rollups. */
const VIEWLESS_COPY = 'bench_verifications_without_views'

/**
 * Fills the store's analytics buffers with `rows` verifications as verifiers hand them over — one recorder per buffer
 * (a verifier each), the traffic recorded by the real recorder and each flush's batch appended whole, ROWS_PER_BATCH
 * rows apiece — then times a real AnalyticsIngest draining every buffer into `engine`, and checks that each row landed
 * once in the raw table and in every rollup.
 */
export async function drainIngest(
  traffic: Traffic,
  rows: number,
  buffer: AnalyticsBufferStore,
  engine: AnalyticsEngine,
  redisPid: number,
): Promise<IngestDrain> {
  const regions = regionsOf()
  const recorders = Array.from(
    { length: ANALYTICS_BUFFER_SHARDS },
    (_, shard) => new AnalyticsRecorder(regions[shard % regions.length]!, ROWS_PER_BATCH),
  )
  const start = Date.now() - Math.ceil(rows / ROWS_PER_BATCH) * FLUSH_MS
  let batches = 0
  let bufferBytes = 0
  const appended: string[] = []
  progress(`recording ${rows.toLocaleString('en-US')} verifications into the analytics buffers`)
  for (let recorded = 0; recorded < rows; batches++) {
    const shard = batches % ANALYTICS_BUFFER_SHARDS
    const recorder = recorders[shard]!
    const from = start + batches * FLUSH_MS
    const count = Math.min(ROWS_PER_BATCH, rows - recorded)
    for (let i = 0; i < count; i++) {
      const one = sample(traffic, Math.random)
      const at = from + Math.floor((i * FLUSH_MS) / count)
      recorder.record(one.key, one.key.identityId, one.code, one.source, at, one.spent, one.tags, one.latencyMs)
    }
    recorded += count
    const taken = recorder.take()!
    const json = JSON.stringify(taken.batch)
    bufferBytes += Buffer.byteLength(json)
    appended.push(json)
    const trimmed = await buffer.append(shard, json, taken.rows, Number.MAX_SAFE_INTEGER)
    if (trimmed > 0) throw new Error(`the analytics buffer trimmed ${trimmed} rows`)
  }

  const ingest = new AnalyticsIngest({
    buffer,
    engine,
    log: pino({ level: 'silent' }),
    registry: new Registry(),
    holder: 'bench',
    namespaceIdOf: async () => undefined,
  })
  progress(`ingesting ${batches} batches (${(bufferBytes / 2 ** 20).toFixed(0)} MiB)`)
  const cpu = () => {
    const { user, system } = process.cpuUsage()
    return (user + system) / 1e6
  }
  const [began, cpuBefore, redisBefore] = [performance.now(), cpu(), processCpuSeconds(redisPid)]
  while (await ingest.ingestNow()) {
    const left = await Promise.all(
      Array.from({ length: ANALYTICS_BUFFER_SHARDS }, async (_, shard) => (await buffer.look(shard, 1)).batches.length),
    )
    if (left.every((n) => n === 0)) break
  }
  const [seconds, cpuSeconds, redisCpuSeconds] = [
    (performance.now() - began) / 1000,
    cpu() - cpuBefore,
    processCpuSeconds(redisPid) - redisBefore,
  ]
  progress(`ingested in ${seconds.toFixed(1)} s; waiting for the merges it set off`)
  const mergesEnded = await mergesDone(engine)
  const cpuSecondsWithMerges = cpu() - cpuBefore
  await checkLanded(engine, rows)
  const parts = await drainParts(appended, engine, cpu)
  return {
    rows,
    batches,
    bufferBytes,
    seconds,
    cpuSeconds,
    cpuSecondsWithMerges,
    mergesEnded,
    redisCpuSeconds,
    parts,
  }
}

/** The CPU of the drain's parts, each alone on the same batches (drainIngest's `parts`). */
async function drainParts(batches: string[], engine: AnalyticsEngine, cpu: () => number) {
  progress('timing the parts of the ingest alone: decoding, encoding, the insert without views')
  let began = cpu()
  const read = batches.map((json) => readBatch(JSON.parse(json) as EncodedBatch))
  const decode = cpu() - began
  began = cpu()
  const lines: string[] = []
  for (const [i, batch] of read.entries()) appendVerificationLines(batch, `vr_0_${i}`, WORKSPACE_ID, lines)
  const encode = cpu() - began
  if (lines.length === 0) throw new Error('no rows to insert')
  await engine.command(`CREATE TABLE \`${VIEWLESS_COPY}\` AS \`${KEY_VERIFICATIONS.name}\``)
  began = cpu()
  // In inserts of the ingest's size (ROWS_PER_INSERT), through the engine's own insert, as the ingest makes them.
  for (let at = 0; at < lines.length; at += ROWS_PER_INSERT) {
    const part = { columns: VERIFICATION_COLUMNS, lines: lines.slice(at, at + ROWS_PER_INSERT) }
    await engine.insert(VIEWLESS_COPY, part, `bench-${at}`)
  }
  const rawInsert = cpu() - began
  await engine.command(`DROP TABLE \`${VIEWLESS_COPY}\``)
  return { decode, encode, rawInsert }
}

/** Waits for the engine's merges to end (at most MERGES_WAIT_MS): whether they did. */
async function mergesDone(engine: AnalyticsEngine): Promise<boolean> {
  const deadline = Date.now() + MERGES_WAIT_MS
  while (Date.now() < deadline) {
    const [running] = await engine.query('SELECT count() AS merges FROM system.merges')
    if (Number(running?.merges) === 0) return true
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return false
}

/** Every row once in the raw table, and counted once in every rollup: a fast ingest that lost rows is no result. */
async function checkLanded(engine: AnalyticsEngine, rows: number): Promise<void> {
  const [raw] = await engine.query(`SELECT count() AS n FROM \`${KEY_VERIFICATIONS.name}\``)
  if (Number(raw?.n) !== rows) throw new Error(`the ingest stored ${String(raw?.n)} rows of ${rows}`)
  for (const rollup of KEY_VERIFICATION_ROLLUPS) {
    const [counted] = await engine.query(`SELECT sum(count) AS n FROM \`${rollup.name}\``)
    if (Number(counted?.n) !== rows) throw new Error(`${rollup.name} counts ${String(counted?.n)} rows of ${rows}`)
  }
}
