import { runLoad, type LoadPlan, type LoadResult } from './load.js'

/**
 * The load of every CPU window (bench:cpu, bench:cpu-host): enough in flight that the server, not the round trip,
 * sets the pace.
 */
export const CPU_CONNECTIONS = 50
export const CPU_PIPELINING = 4

/** A contender's load: POSTs of `bodies` (rotated) to `path`, with anything of the plan overridden by `extra`. */
export const postLoad =
  (url: string, path: string, bodies: string[], extra: Partial<LoadPlan> = {}) =>
  (durationSeconds: number): Promise<LoadResult> =>
    runLoad({
      url,
      path,
      bodies,
      connections: CPU_CONNECTIONS,
      pipelining: CPU_PIPELINING,
      durationSeconds,
      ...extra,
    })

/** A contender's load: GETs of `path`, each with the next of `headerSets` (one X-API-Key per key). */
export const keyedGetLoad =
  (url: string, path: string, headerSets: Record<string, string>[]) =>
  (durationSeconds: number): Promise<LoadResult> =>
    runLoad({
      url,
      path,
      method: 'GET',
      headerSets,
      connections: CPU_CONNECTIONS,
      pipelining: CPU_PIPELINING,
      durationSeconds,
    })
