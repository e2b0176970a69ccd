import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AnalyticsEngine } from '../../control-plane/analytics/engine/analytics-engine.js'
import { ensureAnalyticsSchema } from '../../control-plane/analytics/engine/analytics-tables.js'
import { ChdbEngine } from '../../control-plane/analytics/engine/chdb-engine.js'
import {
  ClickhouseServerEngine,
  type ServerEngineOptions,
} from '../../control-plane/analytics/engine/clickhouse-server-engine.js'
import { startClickhouseServer } from './clickhouse-server.js'

/** An engine open for a test file, its tables made, and how to close it (and whatever it runs on). */
export interface OpenedEngine {
  engine: AnalyticsEngine
  close(): Promise<void>
}

export interface EngineHarness {
  kind: AnalyticsEngine['kind']
  /** Opens the engine on data of its own; `insertPartChars` bounds one insert's text (insert-parts.ts). */
  open(options?: { insertPartChars?: number }): Promise<OpenedEngine>
}

/** The embedded engine (chDB in this process), on a temporary directory. */
export const EMBEDDED_ENGINE: EngineHarness = {
  kind: 'embedded',
  async open(options = {}) {
    const directory = await mkdtemp(join(tmpdir(), 'keygate-analytics-'))
    const engine = new ChdbEngine(directory, options)
    await ensureAnalyticsSchema(engine)
    return {
      engine,
      async close() {
        await engine.close()
        await rm(directory, { recursive: true, force: true })
      },
    }
  },
}

/**
 * The server engine, on a ClickHouse test server of its own (clickhouse-server.ts) with a password, in a database
 * the server does not have until the engine makes it (as at a first start).
 */
export const SERVER_ENGINE: EngineHarness = {
  kind: 'server',
  async open(options: ServerEngineOptions = {}) {
    const server = await startClickhouseServer()
    const engine = new ClickhouseServerEngine(server.url, options)
    try {
      await engine.ensureDatabase()
      await ensureAnalyticsSchema(engine)
    } catch (err) {
      await engine.close()
      await server.stop()
      throw err
    }
    return {
      engine,
      async close() {
        await engine.close()
        await server.stop()
      },
    }
  },
}

/** Both engines: a suite run on each holds them to one behaviour. */
export const ANALYTICS_ENGINES: readonly EngineHarness[] = [EMBEDDED_ENGINE, SERVER_ENGINE]
