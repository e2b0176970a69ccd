import { readFileSync } from 'node:fs'

/**
 * CPU time as the kernel accounts it, read from /proc: the judge of hot-path work on a 2-core machine, where req/s
 * moves with whatever else runs but a process's CPU seconds per request do not. Linux only.
 */

// USER_HZ: the unit of /proc's tick counts. 100 on every Linux architecture Node runs on (`getconf CLK_TCK`).
const TICKS_PER_SECOND = 100

// A process's /proc/<pid>/stat fields from field 3 (state) on: fields[0] is field 3, so field n is fields[n - 3].
function statFields(pid: number, stat = readFileSync(`/proc/${pid}/stat`, 'utf8')): string[] {
  // The command name (field 2) is in parentheses and may itself hold spaces or ')': fields start after the last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/**
 * A process's user + system CPU seconds so far, all its threads together (/proc/<pid>/stat fields 14 and 15; `stat`,
 * that file's text, read now unless given).
 */
export function processCpuSeconds(pid: number, stat?: string): number {
  const fields = statFields(pid, stat)
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
}

/**
 * The user + system CPU seconds of the children a process has waited for so far (fields 16 and 17, cutime + cstime):
 * where a short-lived process's CPU lands once it is gone — in its parent's count when the parent waits for it, an
 * orphan's in whichever process adopted it (the nearest subreaper, else PID 1). A parent that ignores SIGCHLD counts
 * none: its children's CPU lands nowhere.
 */
export function reapedChildrenCpuSeconds(pid: number, stat?: string): number {
  const fields = statFields(pid, stat)
  return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND
}

/** The cores a process may run on (its affinity, /proc/<pid>/status Cpus_allowed_list: "0", "0-1", "0,2-3"). */
export function allowedCores(pid: number | 'self'): number[] {
  const list = /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  if (list === undefined) throw new Error(`/proc/${pid}/status has no Cpus_allowed_list`)
  return list.split(',').flatMap((range) => {
    const [from, to = from] = range.split('-').map(Number)
    return Array.from({ length: to! - from! + 1 }, (_, i) => from! + i)
  })
}

/** Whether the process may run on `core`. */
export function mayRunOn(pid: number, core: number): boolean {
  return allowedCores(pid).includes(core)
}

/**
 * Seconds a core has been idle so far: its /proc/stat line's idle + iowait (`stat`, that file's text, read now unless
 * given). Their sum, because the kernel moves an idle core's current sleep between the two as tasks wait on I/O or
 * stop: either alone can go backwards, the sum cannot.
 *
 * A core's busy time over a window is the window's wall time less this, not /proc/stat's busy fields: on a tickless
 * kernel (NO_HZ_IDLE, the usual build, with tick-based CPU accounting) idle is measured exactly, but user, system and
 * softirq are sampled by the scheduler tick, and a core woken for tens of µs at a time is sampled busy far more or far
 * less often than it is, as the tick happens to fall: a process working in such short bursts can show in the busy
 * fields as several times the CPU it used in one run and as a small fraction of it in the next. Busy so reckoned is
 * everything but idle — interrupts and the cost of waking an idle core included, and on a VM the time the host took
 * (steal), which no process is charged with.
 */
export function idleSeconds(core: number, stat = readFileSync('/proc/stat', 'utf8')): number {
  const ticks = coreTicks(core, stat)
  return (ticks[3]! + ticks[4]!) / TICKS_PER_SECOND
}

/**
 * Seconds the hypervisor has run something else while a core of this VM wanted to run (its /proc/stat line's steal):
 * time no process is charged with. 0 on bare metal.
 */
export function stealSeconds(core: number, stat = readFileSync('/proc/stat', 'utf8')): number {
  return coreTicks(core, stat)[7]! / TICKS_PER_SECOND
}

// A core's /proc/stat tick counts in the file's order: user nice system idle iowait irq softirq steal guest guest_nice
function coreTicks(core: number, stat: string): number[] {
  const line = stat.split('\n').find((l) => l.startsWith(`cpu${core} `))
  if (line === undefined) throw new Error(`/proc/stat has no cpu${core} line`)
  return line.trim().split(/\s+/).slice(1).map(Number)
}

/** A window on some cores from now: the function returned gives the seconds they have been busy since (idleSeconds). */
export function busySince(cores: number[]): () => number {
  const idle = () => {
    const stat = readFileSync('/proc/stat', 'utf8')
    return cores.reduce((sum, core) => sum + idleSeconds(core, stat), 0)
  }
  const [idleBefore, wallBefore] = [idle(), performance.now()]
  return () => (cores.length * (performance.now() - wallBefore)) / 1000 - (idle() - idleBefore)
}

/**
 * A window on one core from now: the function returned gives the share of its time since (0..1) that went to anything
 * but the `charged` processes — the core's busy time less their CPU. (Their CPU on other cores counts against it too:
 * charge only processes that may run on no other, or accept a share that reads low.)
 */
export function othersShareSince(core: number, charged: number[]): () => number {
  // A charged process gone by the end (it exited) is left out of both readings: what it ran counts as others', which
  // errs towards measuring a window again rather than towards keeping a noisy one.
  const cpuOrGone = (pid: number) => {
    try {
      return processCpuSeconds(pid)
    } catch {
      return undefined
    }
  }
  const [busy, before, wallBefore] = [busySince([core]), charged.map(cpuOrGone), performance.now()]
  return () => {
    const coreBusy = busy()
    const chargedCpu = charged.reduce((sum, pid, i) => {
      const [was, now] = [before[i], cpuOrGone(pid)]
      return was === undefined || now === undefined ? sum : sum + now - was
    }, 0)
    return (coreBusy - chargedCpu) / ((performance.now() - wallBefore) / 1000)
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Waits until the cores this process may run on (in a container, its own; where it is not pinned, all of them) — or
 * `cores`, when given — have been less than `maxBusy` (a fraction of them) busy for `windowMs` (a second), so that a
 * round starts quiet. Gives up after `timeoutMs` and says so (the round is then measured anyway, and the report counts
 * it): a bench that never ends on a busy machine helps nobody.
 */
export async function waitForQuiet(
  maxBusy = 0.12,
  timeoutMs = Number(process.env.BENCH_QUIET_TIMEOUT_MS ?? 120_000),
  { cores = allowedCores('self'), windowMs = 1_000 }: { cores?: number[]; windowMs?: number } = {},
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const [busy, wallBefore] = [busySince(cores), performance.now()]
    await sleep(windowMs)
    if (busy() / ((cores.length * (performance.now() - wallBefore)) / 1000) < maxBusy) return true
  }
  return false
}
