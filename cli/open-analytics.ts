import { randomBytes } from 'node:crypto'
import { mkdtemp } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Logger } from 'pino'
import type { AnalyticsEngine } from '../control-plane/analytics/engine/analytics-engine.js'
import { ensureAnalyticsSchema } from '../control-plane/analytics/engine/analytics-tables.js'
import { SchemaGatedEngine } from '../control-plane/analytics/engine/schema-gated-engine.js'

/** Where analytics are kept: the embedded engine's directory, or a ClickHouse server (and its tables' cluster). */
export interface AnalyticsPlace {
  /** The embedded engine's data (undefined: a temporary directory, removed when the engine closes). */
  directory: string | undefined
  /** A ClickHouse server instead: CLICKHOUSE_URL and CLICKHOUSE_CLUSTER. */
  clickhouse?: { url: string; cluster: string | undefined } | undefined
}

/** A control plane's analytics engine, who it is for the ingest's lease, and what its start-up log says of it. */
export interface OpenedAnalytics {
  engine: AnalyticsEngine
  holder: string
  /** The engine, for the logs: which, and where (never the server's credentials). */
  about: Record<string, string>
}

/**
 * Opens the engine `place` names. A ClickHouse server: its database and tables are made in the background, and made
 * again until they are (schema-gated-engine.ts), so that a control plane starts with its server down; any control
 * plane may ingest into it, so the lease's holder is this process. The embedded engine: opened on its directory, its
 * tables made before this answers (a failure is the start's); the lease is held in the directory's name on this host,
 * so that a control plane restarted on the same data takes its lease back at once, and one on other data never
 * shares it. Each engine's module is loaded only when it is the one opened: chDB's engine alone takes about 170 MB.
 */
export async function openAnalytics(place: AnalyticsPlace, log: Logger): Promise<OpenedAnalytics> {
  if (place.clickhouse !== undefined) {
    const { url, cluster } = place.clickhouse
    const { ClickhouseServerEngine } = await import('../control-plane/analytics/engine/clickhouse-server-engine.js')
    const server = new ClickhouseServerEngine(url)
    const engine = new SchemaGatedEngine(
      server,
      async () => {
        await server.ensureDatabase(cluster)
        await ensureAnalyticsSchema(server, cluster)
      },
      log.child({ component: 'analytics' }),
    )
    void engine.start()
    return {
      engine,
      holder: `${hostname()}:${process.pid}:${randomBytes(6).toString('base64url')}`,
      about: { engine: 'server', clickhouse: server.address, ...(cluster === undefined ? {} : { cluster }) },
    }
  }
  const { ChdbEngine } = await import('../control-plane/analytics/engine/chdb-engine.js')
  const { directory } = place
  const path = directory === undefined ? await mkdtemp(join(tmpdir(), 'keygate-analytics-')) : resolve(directory)
  const engine = new ChdbEngine(path, { temporary: directory === undefined })
  try {
    await ensureAnalyticsSchema(engine)
  } catch (err) {
    await engine.close()
    throw err
  }
  return { engine, holder: `${hostname()}:${path}`, about: { engine: 'embedded', directory: path } }
}
