import { mkdtemp } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { AnalyticsEngine } from '../control-plane/analytics/engine/analytics-engine.js'
import { ensureAnalyticsSchema } from '../control-plane/analytics/engine/analytics-tables.js'
import { ChdbEngine } from '../control-plane/analytics/engine/chdb-engine.js'

/** A control plane's analytics engine, its tables made, and who it is for the ingest's lease. */
export interface OpenedAnalytics {
  engine: AnalyticsEngine
  holder: string
}

/**
 * Opens the embedded engine on `directory` (undefined: a temporary one, removed when the engine closes), making its
 * tables when missing. The ingest's lease is held in the directory's name on this host: a control plane restarted on
 * the same data takes its lease back at once, and one on other data never shares it.
 */
export async function openAnalytics(directory: string | undefined): Promise<OpenedAnalytics> {
  const temporary = directory === undefined
  const path = temporary ? await mkdtemp(join(tmpdir(), 'keygate-analytics-')) : resolve(directory)
  const engine = new ChdbEngine(path, { temporary })
  try {
    await ensureAnalyticsSchema(engine)
  } catch (err) {
    await engine.close()
    throw err
  }
  return { engine, holder: `${hostname()}:${path}` }
}
