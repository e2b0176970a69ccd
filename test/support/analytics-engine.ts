import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { ensureAnalyticsSchema } from '../../control-plane/analytics/engine/analytics-tables.js'
import { ChdbEngine } from '../../control-plane/analytics/engine/chdb-engine.js'

/**
 * The embedded analytics engine of the test file, on a temporary directory with its tables made: opened before the
 * file's tests, closed (and its directory removed) after them. chDB allows one per process, and each test file runs in
 * a process of its own: every stack of a file shares it, telling its rows apart by their ids.
 */
export function useAnalyticsEngine(): {
  engine: ChdbEngine
  analytics: (holder: string) => { engine: ChdbEngine; holder: string }
} {
  const opened = {
    engine: undefined as unknown as ChdbEngine,
    analytics: (holder: string) => ({ engine: opened.engine, holder }),
  }
  beforeAll(async () => {
    opened.engine = new ChdbEngine(await mkdtemp(join(tmpdir(), 'keygate-test-analytics-')), { temporary: true })
    await ensureAnalyticsSchema(opened.engine)
  })
  afterAll(async () => {
    await opened.engine?.close()
  })
  return opened
}
