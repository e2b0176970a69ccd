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

// Query parameters whose value is a secret if a client puts one there (e.g. GET keys.verifyKey?key=…).
const SECRET_QUERY = /([?&](?:key|rootKey|root_key|apiKey|api_key|token|authorization)=)[^&]*/gi

/** A URL as logs show it: secret-looking query values censored. */
export function loggableUrl(url: string): string {
  return url.replace(SECRET_QUERY, '$1[redacted]')
}

interface LoggedRequest {
  method?: string
  url?: string
  ip?: string
}

export function loggerOptions(level: string, name: string): LoggerOptions {
  return {
    level,
    name,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: {
      err: pino.stdSerializers.err,
      // Requests are logged by method, censored URL and client address: never headers or bodies.
      req: (req: LoggedRequest) => ({ method: req.method, url: loggableUrl(req.url ?? ''), remoteAddress: req.ip }),
    },
  }
}

export function createLogger(level: string, name: string, destination?: pino.DestinationStream): Logger {
  return destination ? pino(loggerOptions(level, name), destination) : pino(loggerOptions(level, name))
}
