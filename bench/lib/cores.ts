import { execFileSync } from 'node:child_process'
import { availableParallelism } from 'node:os'

/**
 * Servers under test run on SERVER_CORE and the load generator on LOAD_CORE, so neither steals the other's
 * CPU. With one core or no `taskset`, nothing is pinned (and the results say so).
 */
export const SERVER_CORE = 0
export const LOAD_CORE = availableParallelism() > 1 ? 1 : 0

export const canPin = (() => {
  try {
    execFileSync('taskset', ['-c', '0', 'true'])
    return availableParallelism() > 1
  } catch {
    return false
  }
})()

/** The command line, prefixed with `taskset -c <core>` when pinning is possible. */
export function pinned(core: number, command: string[]): string[] {
  return canPin ? ['taskset', '-c', String(core), ...command] : command
}
