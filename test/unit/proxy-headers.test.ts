import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { IncomingHttpHeaders } from 'node:http'
import { clientResponseHeaders, upstreamRequestHeaders, type ForwardedIdentity } from '../../verifier/proxy-headers.js'

/**
 * The proxy's header rules, written plainly (a set of what to drop, per request) as the oracle the hot path's
 * version (no set unless Connection names something) must agree with: RFC 9110 §7.6.1 drops the hop-by-hop headers
 * and every header the Connection header names, both ways; the key, Host and what the client claims about earlier
 * hops or its own address never reach the upstream, nor does any header holding the key, nor Authorization unless the
 * proxy is told to pass it; X-Real-IP is the socket's address, X-Forwarded-For is appended to.
 */
const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
]

function dropped(headers: Record<string, string | string[] | undefined>): Set<string> {
  const drop = new Set(HOP_BY_HOP)
  for (const value of [headers.connection].flat()) {
    for (const name of String(value ?? '').split(',')) if (name.trim()) drop.add(name.trim().toLowerCase())
  }
  return drop
}

function upstreamOracle(incoming: IncomingHttpHeaders, who: ForwardedIdentity): Record<string, string | string[]> {
  const drop = dropped(incoming)
  for (const name of [who.keyHeader, 'host', 'forwarded', 'x-forwarded-proto', 'x-forwarded-host', 'x-real-ip'])
    drop.add(name)
  // Authorization's credentials are read base64-decoded too: `Basic base64(user:key)` holds the key.
  const decoded = (credentials: string) => Buffer.from(credentials.split(' ').pop()!, 'base64').toString()
  const authorization = [incoming.authorization ?? []].flat()
  if (!who.passAuthorization || authorization.some((value) => decoded(value).includes(who.key)))
    drop.add('authorization')
  // A header holding the key is dropped whole, whatever it is (X-Forwarded-For and Host too, before they are read).
  const holdsKey = (value: string | string[]) => [value].flat().some((item) => item.includes(who.key))
  const headers: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(incoming)) {
    if (value !== undefined && !holdsKey(value) && !drop.has(name) && !name.startsWith('x-keygate-'))
      headers[name] = value
  }
  headers['x-keygate-key-id'] = who.keyId
  if (who.ownerId !== undefined) headers['x-keygate-owner-id'] = who.ownerId
  headers['x-request-id'] = who.requestId
  const earlier = incoming['x-forwarded-for']
  const forwardedFor = [earlier !== undefined && holdsKey(earlier) ? [] : earlier, who.clientAddress]
    .flat()
    .filter(Boolean)
    .join(', ')
  if (forwardedFor) headers['x-forwarded-for'] = forwardedFor
  if (who.clientAddress) headers['x-real-ip'] = who.clientAddress
  if (incoming.host && !holdsKey(incoming.host)) headers['x-forwarded-host'] = incoming.host
  headers['x-forwarded-proto'] = 'http'
  return headers
}

function responseOracle(upstream: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const drop = dropped(upstream)
  const headers: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(upstream))
    if (value !== undefined && !drop.has(name)) headers[name] = value
  return headers
}

// Names that matter to the rules, and tokens a Connection header may list (in any case, with any spacing).
const NAMES = [
  'close',
  'keep-alive',
  'x-hop',
  'x-custom',
  'te',
  'upgrade',
  'host',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
  'authorization',
  'x-api-key',
  'x-keygate-key-id',
  'x-keygate-cost',
  'content-type',
  'expect',
]
const token = fc.constantFrom(...NAMES, 'Close', 'KEEP-ALIVE', 'X-Hop', ' close ', '')
const connection = fc.oneof(
  fc.array(token, { minLength: 1, maxLength: 3 }).map((tokens) => tokens.join(',')),
  fc.array(
    fc.array(token, { minLength: 1, maxLength: 2 }).map((tokens) => tokens.join(', ')),
    { minLength: 1, maxLength: 2 },
  ),
)
const value = fc.oneof(
  fc.constantFrom(
    '',
    '203.0.113.7',
    'v',
    'sk_secret',
    'Bearer sk_secret',
    'Bearer other',
    `Basic ${Buffer.from('user:sk_secret').toString('base64')}`,
    `Basic ${Buffer.from('sk_secret:').toString('base64url')}`,
    `Bearer ${Buffer.from('sk_secret').toString('base64')}`,
    `Basic ${Buffer.from('user:password').toString('base64')}`,
  ),
  fc.array(fc.constantFrom('a', '10.0.0.1', '', 'k=sk_secret'), { maxLength: 2 }),
)
const headers = fc
  .record({
    pairs: fc.array(fc.tuple(fc.constantFrom(...NAMES), value), { maxLength: 8 }),
    connection: fc.option(connection, { nil: undefined }),
  })
  .map(({ pairs, connection }) => {
    const out: Record<string, string | string[] | undefined> = Object.fromEntries(pairs)
    if (connection !== undefined) out.connection = connection
    return out
  })
const who = fc.record({
  keyId: fc.constant('key_1'),
  ownerId: fc.option(fc.constant('acme'), { nil: undefined }),
  requestId: fc.constant('req_1'),
  clientAddress: fc.option(fc.constant('127.0.0.1'), { nil: undefined }),
  keyHeader: fc.constantFrom('x-api-key', 'authorization'),
  key: fc.constant('sk_secret'),
  passAuthorization: fc.boolean(),
})

describe('proxy headers', () => {
  it('forwards to the upstream exactly what the plain rules forward', () => {
    fc.assert(
      fc.property(headers, who, (incoming, identity) => {
        const { ownerId, clientAddress, ...rest } = identity
        const forwarded: ForwardedIdentity = {
          ...rest,
          ...(ownerId === undefined ? {} : { ownerId }),
          ...(clientAddress === undefined ? {} : { clientAddress }),
        }
        const asked = incoming as IncomingHttpHeaders
        expect(upstreamRequestHeaders(asked, forwarded)).toStrictEqual(upstreamOracle(asked, forwarded))
      }),
      { seed: 16, numRuns: 2_000 },
    )
  })

  it('hands the client exactly what the plain rules hand it of the upstream’s answer, with its own request id', () => {
    fc.assert(
      fc.property(headers, (upstream) => {
        expect(clientResponseHeaders(upstream, 'req_1')).toStrictEqual({
          ...responseOracle(upstream),
          'x-request-id': 'req_1',
        })
      }),
      { seed: 16, numRuns: 2_000 },
    )
  })

  it('appends the client to X-Forwarded-For, names it in X-Real-IP and names the host it was asked for, which it does not pass on', () => {
    const who: ForwardedIdentity = {
      keyId: 'key_1',
      requestId: 'req_1',
      clientAddress: '127.0.0.1',
      keyHeader: 'x-api-key',
      key: 'sk_secret',
      passAuthorization: false,
    }
    const headers = upstreamRequestHeaders(
      {
        host: 'api.example:8080',
        'x-forwarded-for': '203.0.113.7, 10.0.0.1',
        'x-real-ip': '203.0.113.7',
        'x-api-key': 'sk_secret',
      },
      who,
    )
    expect(headers).toMatchObject({
      'x-forwarded-for': '203.0.113.7, 10.0.0.1, 127.0.0.1',
      'x-real-ip': '127.0.0.1',
      'x-forwarded-host': 'api.example:8080',
      'x-forwarded-proto': 'http',
    })
    expect(headers).not.toHaveProperty('host')
    expect(headers).not.toHaveProperty('x-api-key')
  })
})
