import { setFlagsFromString } from 'node:v8'

/**
 * Keygate's servers run with V8's allocation-site pretenuring off. V8 watches how many objects of each object or array
 * literal survive a scavenge, and once a sampled scavenge finds 85 % of a literal's objects alive (with the new space
 * grown to 16 MB or more) it allocates that literal's objects straight in the old generation from then on. A server's
 * start-up (modules, caches, long-lived records) and a scavenge that lands while a burst of requests is in flight can
 * both make that call for a literal that, under load, makes objects per request: those then die in the old
 * generation, and every young object they point to survives the scavenges (the old generation's pointers are roots
 * to the scavenger) and is promoted in turn. A process that falls into this keeps it for life: its new space grows to
 * its maximum, every scavenge is long and promotes what the next full collection frees, and every verification costs
 * more CPU than in a process that did not. With pretenuring off, none does.
 *
 * Set before the command's modules load, through `v8.setFlagsFromString`: V8 reads the flag when it next decides (at a
 * scavenge), so it needs no relaunch (on Node 20 and 24 alike no pretenuring feedback is processed after it). A
 * process started with `--allocation-site-pretenuring` on its command line keeps it (the operator's choice; Node
 * refuses the flag in NODE_OPTIONS).
 */
/** Pretenuring asked for, in any spelling V8 takes (one dash or two); a bool flag takes no value. */
export const PRETENURING_ON = /^--?allocation[-_]site[-_]pretenuring$/

/** Whether node was started with pretenuring asked for: then it is left on. */
export function pretenuringAskedFor(execArgv: readonly string[]): boolean {
  return execArgv.some((flag) => PRETENURING_ON.test(flag))
}

/** Turns V8's allocation-site pretenuring off for the rest of the process, unless it was asked for. */
export function turnOffAllocationSitePretenuring(execArgv: readonly string[]): void {
  if (!pretenuringAskedFor(execArgv)) setFlagsFromString('--no-allocation-site-pretenuring')
}
