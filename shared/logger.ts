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

/**
 * Query parameters whose values are safe to log: ids, paging and flags of Keygate's own GET operations. Every
 * other value is redacted, whatever its name (a client may put a key in `?apiKey=`, `?roles=`, `?q=` …), and so
 * is a bare word with no `=` (it may be the key itself).
 */
const HARMLESS_QUERY = new Set(['apiId', 'keyId', 'cursor', 'limit', 'start', 'end', 'granularity', 'decrypt'])

/**
 * A query parameter name shown as it is: short, and made of the characters names are made of. Anything else may be
 * the key itself sent with an `=` (`?<key>=`, or a base64 key's padding in `?<key>`): every key Keygate makes, and
 * a bootstrap root key, is at least 16 characters, so a longer name is redacted like a value.
 */
const PLAIN_NAME = /^[A-Za-z0-9_.[\]-]{1,15}$/

/** A URL as logs show it: the path, the names of its query parameters, and only harmless values. */
export function loggableUrl(url: string): string {
  const query = url.indexOf('?')
  if (query < 0) return url
  const params = url
    .slice(query + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=')
      if (equals < 0) return pair === '' ? pair : '[redacted]'
      const name = pair.slice(0, equals)
      if (HARMLESS_QUERY.has(name)) return pair
      return `${PLAIN_NAME.test(name) ? name : '[redacted]'}=[redacted]`
    })
  return `${url.slice(0, query)}?${params.join('&')}`
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
