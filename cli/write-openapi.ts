import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { pino } from 'pino'
import { monotonicClock, systemClock } from '../shared/clock.js'
import { devConfig } from '../shared/config/config.js'
import { openBackend } from '../shared/store/backend.js'
import { assembleControlPlane } from './assemble-control-plane.js'

/**
 * Writes the OpenAPI document the control plane serves at /openapi.json to a file (`npm run lint:openapi`, or
 * to publish it). Taken from a control plane assembled as `keygate dev` assembles it, never listening: the
 * document depends on the routes, not on the store.
 */
const out = process.argv[2] ?? 'openapi.json'
const config = devConfig([], {})
const backend = openBackend({ kind: 'memory' })
const { app } = assembleControlPlane(
  {
    store: backend.store,
    feed: backend.feed,
    clock: systemClock,
    elapsed: monotonicClock,
    log: pino({ level: 'silent' }),
    closeBackend: () => backend.close(),
  },
  {
    bodyLimitBytes: config.bodyLimitBytes,
    docsBaseUrl: config.docsBaseUrl,
    cache: config.cache,
    sync: config.sync,
    bootstrapRootKey: undefined,
    gateway: config.gateway,
    service: 'dev',
  },
)
try {
  const response = await app.inject({ method: 'GET', url: '/openapi.json' })
  if (response.statusCode !== 200) throw new Error(`GET /openapi.json answered ${response.statusCode}`)
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, `${JSON.stringify(response.json(), null, 2)}\n`)
  console.log(`wrote ${out}`)
} finally {
  await app.close()
}
