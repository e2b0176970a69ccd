import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { devConfig } from '../../shared/config/config.js'
import { startDev } from '../dev-main.js'

/**
 * Writes the OpenAPI document the control plane serves at /openapi.json to a file (`npm run lint:openapi`, or
 * to publish it). Taken from an embedded service on a free port: the document depends on the routes, not on the
 * store.
 */
const out = process.argv[2] ?? 'openapi.json'
const dev = await startDev(devConfig(['--port', '0', '--host', '127.0.0.1', '--log-level', 'silent'], {}))
try {
  const response = await dev.app.inject({ method: 'GET', url: '/openapi.json' })
  if (response.statusCode !== 200) throw new Error(`GET /openapi.json answered ${response.statusCode}`)
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, `${JSON.stringify(response.json(), null, 2)}\n`)
  console.log(`wrote ${out}`)
} finally {
  await dev.app.close()
}
