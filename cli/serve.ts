import type { Logger } from 'pino'
import type { ServerConfig } from '../shared/config/config.js'
import type { KeygateServer } from '../shared/http/keygate-server.js'
import { closeGracefully } from '../shared/http/graceful-shutdown.js'
import { createLogger } from '../shared/logger.js'

/** A server command's process: its logger, its start-up, then graceful shutdown on SIGTERM/SIGINT. */
export async function serve<Config extends ServerConfig>(
  name: string,
  config: Config,
  start: (config: Config, log: Logger) => Promise<KeygateServer>,
): Promise<'serving'> {
  const log = createLogger(config.logLevel, name)
  const app = await start(config, log)
  closeGracefully(log, config.shutdownGraceMs, config.shutdownDelayMs, app)
  return 'serving'
}
