import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { pausesBetween, readGcPauses } from '../../bench/lib/gc-pauses.js'
import { readTimerCallbacks } from '../../bench/lib/timer-callbacks.js'

/**
 * What bench:tail's servers log, by preloads (bench/servers/gc-pause-log.ts: their collections;
 * timer-callback-log.ts: their timer callbacks), and reading it back.
 */
describe('bench server logs (bench:tail)', () => {
  const dirs: string[] = []
  const scratch = () => {
    const dir = mkdtempSync(join(tmpdir(), 'keygate-gc-test-'))
    dirs.push(dir)
    return dir
  }
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
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

  it('logs the collections of a process it is imported into: kind, when, how long, the new space then', () => {
    const file = join(scratch(), 'gc.log')
    const logger = fileURLToPath(new URL('../../dist/bench/servers/gc-pause-log.js', import.meta.url))
    const before = Date.now()
    // A full collection of a heap holding 300,000 objects, timed by the process itself; another, and one of the young
    // generation. The observer is called after them, in a later turn: the process lingers a moment, then says its
    // new space's size and how long the timed collection took it.
    const script = `
      const keep = Array.from({ length: 300_000 }, (_, i) => ({ i }))
      const started = performance.now()
      gc()
      const majorMs = performance.now() - started
      gc({ type: 'minor' })
      gc()
      setTimeout(() => {
        const young = require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size
        console.log(JSON.stringify({ young, majorMs, kept: keep.length }))
      }, 100)`
    const run = spawnSync(process.execPath, ['--expose-gc', `--import=${logger}`, '-e', script], {
      env: { ...process.env, BENCH_GC_LOG: file },
      encoding: 'utf8',
    })
    expect(run.status, run.stderr).toBe(0)
    const said = JSON.parse(run.stdout) as { young: number; majorMs: number }
    const pauses = readGcPauses(file)
    const majors = pauses.filter((p) => p.kind === 'major')
    expect(majors.length).toBeGreaterThanOrEqual(2)
    expect(pauses.filter((p) => p.kind === 'minor').length).toBeGreaterThanOrEqual(1)
    // In milliseconds: marking 300,000 objects takes more than 50 µs, and no longer than the process saw it take.
    expect(majors[0]!.durationMs).toBeGreaterThan(0.05)
    expect(majors[0]!.durationMs).toBeLessThanOrEqual(said.majorMs + 0.5)
    for (const p of pauses) {
      expect(p.beganEpochMs).toBeGreaterThanOrEqual(before - 1)
      expect(p.beganEpochMs).toBeLessThanOrEqual(Date.now())
    }
    // The new space's size, as the process itself reads it afterwards.
    expect(pauses.at(-1)!.youngBytes).toBe(said.young)
    expect(readFileSync(file, 'utf8').endsWith('\n')).toBe(true)
  })

  it('logs the timer callbacks of a process it is imported into that held its thread, and leaves timers working', () => {
    const file = join(scratch(), 'timers.log')
    const logger = fileURLToPath(new URL('../../dist/bench/servers/timer-callback-log.js', import.meta.url))
    const before = Date.now()
    // A timeout that holds the thread 5 ms, one that holds it 3 ms and throws, an interval that holds it 2 ms twice,
    // each noting when it began; quick ones (not logged), one cleared before it ran, an unref'd one that never runs.
    // Timers keep their semantics: `this` is the Timeout, extra arguments arrive, the error still reaches the process,
    // a callback that is not a function is refused as before, util.promisify's setTimeout resolves, names are kept.
    // Nothing is printed from a callback (a write to the pipe can itself take a millisecond on a loaded machine).
    const script = `
      const said = []
      const spun = []
      const spin = (ms) => {
        const began = performance.timeOrigin + performance.now()
        const end = performance.now() + ms
        while (performance.now() < end);
        spun.push({ began, ms })
      }
      const { promisify } = require('node:util')
      process.on('uncaughtException', (err) => said.push('uncaught ' + err.message))
      setTimeout(() => spin(5), 1)
      const timeout = setTimeout(function (a, b) { said.push('this ' + (this === timeout) + ' ' + a + b) }, 2, 'x', 'y')
      setTimeout(() => { spin(3); throw new Error('boom') }, 10)
      let ticks = 0
      const interval = setInterval(() => { spin(2); if (++ticks === 2) clearInterval(interval) }, 20)
      setTimeout(() => {}, 1)
      clearTimeout(setTimeout(() => spin(50), 5))
      setTimeout(() => spin(50), 60_000).unref()
      try { setTimeout('not a function') } catch (err) { said.push('refused ' + err.code) }
      said.push('named ' + setTimeout.name + ' ' + setInterval.name)
      promisify(setTimeout)(80, 'resolved').then((value) => said.push(value))
      process.on('exit', () => console.log(JSON.stringify({ said, spun })))`
    const run = spawnSync(process.execPath, [`--import=${logger}`, '-e', script], {
      env: { ...process.env, BENCH_TIMER_LOG: file },
      encoding: 'utf8',
      timeout: 10_000,
    })
    expect(run.status, run.stderr).toBe(0)
    const { said, spun } = JSON.parse(run.stdout) as { said: string[]; spun: { began: number; ms: number }[] }
    expect(said.sort()).toStrictEqual(
      [
        'named setTimeout setInterval',
        'refused ERR_INVALID_ARG_TYPE',
        'resolved',
        'this true xy',
        'uncaught boom',
      ].sort(),
    )
    // The four spun callbacks ran (neither 50 ms one did), and each is in the log: as the entry begun last before it
    // noted its own start (a callback runs inside its wrapper, which begins first and logs it), at least as long as it
    // spun. Whatever else was logged (a quick callback slowed on a loaded machine) held the thread the 30 µs floor.
    expect(spun.map((s) => s.ms)).toStrictEqual([5, 3, 2, 2])
    const callbacks = readTimerCallbacks(file)
    for (const { began, ms } of spun) {
      const entry = callbacks.findLast((c) => c.beganEpochMs <= began + 0.001)
      expect(entry, `a log entry for the ${ms} ms callback`).toBeDefined()
      expect(entry!.durationMs).toBeGreaterThanOrEqual(ms)
    }
    // A distinct entry for each spun callback.
    const spunEntries = spun.map(({ began }) => callbacks.findLast((c) => c.beganEpochMs <= began + 0.001))
    expect(new Set(spunEntries).size).toBe(4)
    for (const c of callbacks) {
      expect(c.durationMs).toBeGreaterThanOrEqual(0.03)
      expect(c.beganEpochMs).toBeGreaterThanOrEqual(before - 1)
      expect(c.beganEpochMs).toBeLessThanOrEqual(Date.now())
    }
    expect(readTimerCallbacks(join(scratch(), 'none.log'))).toStrictEqual([])
  })

  it.each([
    ['gc-pause-log', 'BENCH_GC_LOG'],
    ['timer-callback-log', 'BENCH_TIMER_LOG'],
  ])('%s refuses to start without a file to write to (%s)', (name, variable) => {
    const logger = fileURLToPath(new URL(`../../dist/bench/servers/${name}.js`, import.meta.url))
    const env = { ...process.env }
    delete env[variable]
    const run = spawnSync(process.execPath, [`--import=${logger}`, '-e', '0'], { env, encoding: 'utf8' })
    expect(run.status).not.toBe(0)
    expect(run.stderr).toContain(variable)
  })
})
