import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ChdbEngine } from '../../control-plane/analytics/engine/chdb-engine.js'
import { ANALYTICS_ENGINES } from '../support/analytics-engines.js'
import { analyticsEngineContract } from './analytics-engine.contract.js'

/** The analytics engines, embedded (chDB) and a server (a ClickHouse HTTP interface), held to one contract. */
for (const harness of ANALYTICS_ENGINES) analyticsEngineContract(harness)

describe('the embedded analytics engine', () => {
  it('refuses a second engine in the same process, which chDB cannot open', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'keygate-analytics-'))
    const engine = new ChdbEngine(directory)
    try {
      expect(() => new ChdbEngine(join(directory, 'other'))).toThrow(/one data directory per process/)
    } finally {
      await engine.close()
      rmSync(directory, { recursive: true, force: true })
    }
  })
})
