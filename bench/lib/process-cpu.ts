import { readFileSync } from 'node:fs'

/**
 * CPU time as the kernel accounts it, read from /proc: the judge of hot-path work on a 2-core machine, where req/s
 * moves with whatever else runs but a process's CPU seconds per request do not. Linux only.
 */

// USER_HZ: the unit of /proc's tick counts. 100 on every Linux architecture Node runs on (`getconf CLK_TCK`).
const TICKS_PER_SECOND = 100

/** A process's user + system CPU seconds so far, all its threads together (/proc/<pid>/stat fields 14 and 15). */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // The command name (field 2) is in parentheses and may itself hold spaces or ')': fields start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // fields[0] is field 3 (state): utime is field 14, stime field 15.
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
}

/** Whether the process may run on `core` (its affinity, /proc/<pid>/status Cpus_allowed_list: "0", "0-1", "0,2-3"). */
export function mayRunOn(pid: number, core: number): boolean {
  const list = /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  if (list === undefined) return true
  return list.split(',').some((range) => {
    const [from, to = from] = range.split('-').map(Number)
    return from! <= core && core <= to!
  })
}

/** Busy and total CPU seconds of one core (`cpu0`…) or of the machine (`cpu`), from /proc/stat. */
export function coreTimes(core: number | 'all'): { busy: number; total: number } {
  const name = core === 'all' ? 'cpu' : `cpu${core}`
  const line = readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name} `))
  if (line === undefined) throw new Error(`/proc/stat has no ${name} line`)
  const ticks = line.trim().split(/\s+/).slice(1).map(Number)
  // user nice system idle iowait irq softirq steal …: idle and iowait are the idle ones; guest time is inside user.
  const total = ticks.slice(0, 8).reduce((sum, n) => sum + n, 0)
  const idle = ticks[3]! + ticks[4]!
  return { busy: (total - idle) / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Waits until the whole machine has been less than `maxBusy` (a fraction of all cores) busy for a second, so
 * that a round starts quiet. Gives up after `timeoutMs` and says so (the round is then measured anyway, and the
 * report counts it): a bench that never ends on a busy machine helps nobody.
 */
export async function waitForQuiet(
  maxBusy = 0.12,
  timeoutMs = Number(process.env.BENCH_QUIET_TIMEOUT_MS ?? 120_000),
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const before = coreTimes('all')
    await sleep(1_000)
    const after = coreTimes('all')
    if ((after.busy - before.busy) / (after.total - before.total) < maxBusy) return true
  }
  return false
}
