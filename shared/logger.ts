import { pino, type Logger, type LoggerOptions } from 'pino'

/**
 * Redaction is set here once for every process: no key, root key or credential reaches a log at any level,
 * wherever an object carrying one is logged.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  'key',
  'rootKey',
  '*.key',
  '*.rootKey',
  'body.key',
  'req.body.key',
]

export function loggerOptions(level: string, name: string): LoggerOptions {
  return {
    level,
    name,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: { err: pino.stdSerializers.err },
  }
}

export function createLogger(level: string, name: string, destination?: pino.DestinationStream): Logger {
  return destination ? pino(loggerOptions(level, name), destination) : pino(loggerOptions(level, name))
}
