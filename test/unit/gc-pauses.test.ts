import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { heldByPauses, pausesBetween, readGcPauses, type GcPause } from '../../bench/lib/gc-pauses.js'
import type { SlowRequests } from '../../bench/lib/load.js'

/** bench:tail's two halves: a server's log of its collections, and slow requests put beside it. */
describe('gc pauses (bench:tail)', () => {
  const dirs: string[] = []
  const scratch = () => {
    const dir = mkdtempSync(join(tmpdir(), 'keygate-gc-test-'))
    dirs.push(dir)
    return dir
  }
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  const pause = (beganEpochMs: number, durationMs: number): GcPause => ({
    beganEpochMs,
    durationMs,
    kind: 'minor',
    youngBytes: 1,
  })
  const slow = (requests: [sentAt: number, latency: number][]): SlowRequests => ({
    overMs: 1,
    fromEpochMs: 0,
    toEpochMs: 10_000,
    sentAtEpochMs: requests.map(([sentAt]) => sentAt),
    latencyMs: requests.map(([, latency]) => latency),
  })

  it('counts a slow request as held when it was in flight during a pause, and only then', () => {
    // One pause over [100, 102).
    const pauses = [pause(100, 2)]
    // In flight across it; written during it; answered during it; just before it; just after it.
    expect(heldByPauses(slow([[99, 5]]), pauses)).toBe(1)
    expect(heldByPauses(slow([[101, 1.5]]), pauses)).toBe(1)
    expect(heldByPauses(slow([[98, 2.5]]), pauses)).toBe(1)
    expect(heldByPauses(slow([[97, 3]]), pauses)).toBe(0)
    expect(heldByPauses(slow([[102, 4]]), pauses)).toBe(0)
    // Several requests and pauses in any order: each request counted once.
    expect(
      heldByPauses(
        slow([
          [99, 5],
          [150, 2],
          [300, 9],
          [500, 1.2],
        ]),
        [pause(305, 1), pause(100, 2), pause(301, 1)],
      ),
    ).toBe(2)
  })

  it('reads a log line by line and picks the pauses that began in a window', () => {
    const file = join(scratch(), 'gc.log')
    writeFileSync(file, '1000.500 0.250 minor 16777216\n1100.000 12.000 major 16777216\n1200.125 0.300 minor 8388608\n')
    const pauses = readGcPauses(file)
    expect(pauses).toStrictEqual([
      { beganEpochMs: 1000.5, durationMs: 0.25, kind: 'minor', youngBytes: 16_777_216 },
      { beganEpochMs: 1100, durationMs: 12, kind: 'major', youngBytes: 16_777_216 },
      { beganEpochMs: 1200.125, durationMs: 0.3, kind: 'minor', youngBytes: 8_388_608 },
    ])
    expect(pausesBetween(pauses, 1000.5, 1200.125).map((p) => p.kind)).toStrictEqual(['minor', 'major'])
    expect(readGcPauses(join(scratch(), 'none.log'))).toStrictEqual([])
  })

  it('logs every collection of a process it is imported into, with its kind and when it began', () => {
    const file = join(scratch(), 'gc.log')
    const logger = fileURLToPath(new URL('../../dist/bench/servers/gc-pause-log.js', import.meta.url))
    const before = Date.now()
    // Two full collections and one of the young generation, each asked for by name; the observer is called after
    // them, in a later turn: the process lingers a moment before it exits.
    const run = spawnSync(
      process.execPath,
      ['--expose-gc', `--import=${logger}`, '-e', "gc(); gc({ type: 'minor' }); gc(); setTimeout(() => {}, 100)"],
      { env: { ...process.env, BENCH_GC_LOG: file }, encoding: 'utf8' },
    )
    expect(run.status, run.stderr).toBe(0)
    const pauses = readGcPauses(file)
    expect(pauses.filter((p) => p.kind === 'major').length).toBeGreaterThanOrEqual(2)
    expect(pauses.filter((p) => p.kind === 'minor').length).toBeGreaterThanOrEqual(1)
    for (const p of pauses) {
      expect(p.beganEpochMs).toBeGreaterThanOrEqual(before - 1)
      expect(p.beganEpochMs).toBeLessThanOrEqual(Date.now())
      expect(p.durationMs).toBeGreaterThan(0)
      expect(p.youngBytes).toBeGreaterThan(0)
    }
    expect(readFileSync(file, 'utf8').endsWith('\n')).toBe(true)
  })

  it('refuses to start without a file to write to', () => {
    const logger = fileURLToPath(new URL('../../dist/bench/servers/gc-pause-log.js', import.meta.url))
    const env = { ...process.env }
    delete env.BENCH_GC_LOG
    const run = spawnSync(process.execPath, [`--import=${logger}`, '-e', '0'], { env, encoding: 'utf8' })
    expect(run.status).not.toBe(0)
    expect(run.stderr).toMatch(/BENCH_GC_LOG/)
  })
})
