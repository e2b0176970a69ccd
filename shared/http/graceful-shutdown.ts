import closeWithGrace from 'close-with-grace'
import type { Logger } from 'pino'
import type { KeygateServer } from './build-server.js'

/**
 * SIGTERM/SIGINT: stop taking requests (new ones get 503), drain the ones in flight, close connections
 * through each server's onClose hooks, exit. A second signal or the grace period running out exits at once.
 */
export function closeGracefully(log: Logger, graceMs: number, app: KeygateServer): void {
  closeWithGrace({ delay: graceMs }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'fatal error; shutting down')
    else log.info({ signal }, 'shutting down')
    app.stopAccepting()
    await app.close()
  })
}
