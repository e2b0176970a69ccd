import closeWithGrace from 'close-with-grace'
import type { Logger } from 'pino'
import type { KeygateServer } from './keygate-server.js'

/**
 * SIGTERM/SIGINT: turn readiness false and keep serving for `delayMs` (the time load balancers need to notice),
 * then stop taking requests (new ones get 503), drain the ones in flight, close connections through each
 * server's onClose hooks, exit. A second signal or the grace period running out exits at once.
 */
export function closeGracefully(log: Logger, graceMs: number, delayMs: number, app: KeygateServer): void {
  closeWithGrace({ delay: graceMs + delayMs }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'fatal error; shutting down')
    else log.info({ signal, drainDelayMs: delayMs }, 'shutting down')
    // 1. Not ready, still serving: load balancers and gateways stop sending here.
    app.beginDraining()
    if (delayMs > 0 && !err) await new Promise((resolve) => setTimeout(resolve, delayMs))
    // 2. Refuse new requests, finish the ones in flight, close connections.
    app.stopAccepting()
    await app.close()
  })
}
