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

/** The /proc/stat line of one core (`cpu0`…) or of every core together (`cpu`), as numbers (ticks). */
function statTicks(core: number | 'all'): number[] {
  const name = core === 'all' ? 'cpu' : `cpu${core}`
  const line = readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name} `))
  if (line === undefined) throw new Error(`/proc/stat has no ${name} line`)
  return line.trim().split(/\s+/).slice(1).map(Number)
}

/**
 * Seconds one core (or every core, summed) has been idle so far (/proc/stat's idle + iowait). A core's busy time over
 * a window is the window's wall time less this, not /proc/stat's busy fields: on a tickless kernel (NO_HZ_IDLE, the
 * usual build) idle is measured exactly but user, system and softirq are sampled by the scheduler tick, and a core
 * woken by each packet for tens of µs is sampled busy far more often than it is: a process pinned to core 0 working
 * 60 µs per datagram, 4,000 a second, used 0.63 s of it in 2.05 s while the busy fields grew by 1.88 s (their total
 * 3.28 s: more than the wall time), and a paced bench window read "others took 55–63 % of the core" (2026-11-26).
 */
export function idleSeconds(core: number | 'all'): number {
  const ticks = statTicks(core)
  return (ticks[3]! + ticks[4]!) / TICKS_PER_SECOND
}

/** A window on one core from now: the function returned gives the seconds it has been busy since (see idleSeconds). */
export function busySince(core: number): () => number {
  const [idleBefore, wallBefore] = [idleSeconds(core), performance.now()]
  return () => (performance.now() - wallBefore) / 1000 - (idleSeconds(core) - idleBefore)
}

/** The cores /proc/stat counts (its `cpuN` lines): what its `cpu` line sums. */
function statCores(): number {
  return readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .filter((l) => /^cpu\d+ /.test(l)).length
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
  const cores = statCores()
  while (Date.now() < deadline) {
    const [idleBefore, wallBefore] = [idleSeconds('all'), performance.now()]
    await sleep(1_000)
    const [idleAfter, wallAfter] = [idleSeconds('all'), performance.now()]
    const capacity = (cores * (wallAfter - wallBefore)) / 1000
    if (1 - (idleAfter - idleBefore) / capacity < maxBusy) return true
  }
  return false
}
