/** A run of percent escapes: decoded together, so that a character of several UTF-8 bytes decodes whole. */
const ESCAPES = /(?:%[0-9a-fA-F]{2})+/g

/**
 * A run's bytes as UTF-8, each byte that is not part of a character made U+FFFD: as URLSearchParams, browsers and
 * Python's parse_qs decode a query, so that an invalid byte ahead of an encoded key (`%FF%73%6b…`) does not keep the
 * key from being recognised where the upstream would read it.
 */
const decodeRun = (run: string): string => Buffer.from(run.replaceAll('%', ''), 'hex').toString('utf8')

/** Whether one `name=value` of a query holds the key: as sent, or once its escapes (and `+` for space) are decoded. */
function holdsKey(pair: string, key: string): boolean {
  if (pair.includes(key)) return true
  if (!pair.includes('%') && !pair.includes('+')) return false
  return pair.replaceAll('+', ' ').replace(ESCAPES, decodeRun).includes(key)
}

/**
 * The request target the upstream gets: the client's, less every query parameter that holds the verified key (in its
 * name or its value, as sent or percent-encoded), as every header holding it is removed: a client that sends its key
 * in the URL as well does not hand it to the upstream. The rest is passed as sent, in its order. The path is never
 * changed: it names the upstream's resource. A target whose query cannot hold the key (no copy of it, no escape, no
 * `+`: almost every request) is returned as it is, without a copy.
 */
export function upstreamTarget(target: string, key: string): string {
  const query = target.indexOf('?')
  if (query === -1) return target
  if (!target.includes(key, query) && !target.includes('%', query) && !target.includes('+', query)) return target
  const pairs = target.slice(query + 1).split('&')
  const kept = pairs.filter((pair) => !holdsKey(pair, key))
  if (kept.length === pairs.length) return target
  const path = target.slice(0, query)
  return kept.length === 0 ? path : `${path}?${kept.join('&')}`
}
