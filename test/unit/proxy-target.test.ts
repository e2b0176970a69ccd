import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { upstreamTarget } from '../../verifier/proxy-target.js'

const KEY = 'sk_3ZbFq9xYkWm2PnRt7sLcVd'
/** Every character of `text` percent-encoded, as a client that encodes more than it must sends it. */
const encoded = (text: string) =>
  [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('')

/**
 * The rule written plainly, as the oracle: a parameter goes when it holds the key as sent, or once decoded as the
 * upstream's own parser decodes it (URLSearchParams: `+` is a space, escapes are UTF-8, a byte that is not part of a
 * character is U+FFFD, as browsers and Python's parse_qs read it too).
 */
function oracle(target: string, key: string): string {
  const [path, query] = [target.slice(0, target.indexOf('?')), target.slice(target.indexOf('?') + 1)]
  const kept = query.split('&').filter((pair) => {
    if (pair.includes(key)) return false
    return ![...new URLSearchParams(pair)].some(([name, value]) => name.includes(key) || value.includes(key))
  })
  return kept.length === 0 ? path : `${path}?${kept.join('&')}`
}

describe('the target the upstream gets', () => {
  it('loses exactly the parameters that hold the key as the upstream would read them', () => {
    for (const key of [KEY, 'imported key+1']) {
      // The key whole, encoded, in halves; escapes that are no character, or half of one; the separators.
      const unit = fc.constantFrom(
        key,
        encoded(key),
        key.replaceAll(' ', '+'),
        encoded(key.slice(0, 6)),
        key.slice(6),
        '%FF',
        '%E2%82',
        '%C3%A9',
        '%ZZ',
        '%4',
        '+',
        '=',
        'a',
      )
      const pair = fc.array(unit, { maxLength: 4 }).map((units) => units.join(''))
      const target = fc.array(pair, { minLength: 1, maxLength: 3 }).map((pairs) => `/x?${pairs.join('&')}`)
      fc.assert(
        fc.property(target, (sent) => {
          expect(upstreamTarget(sent, key), sent).toBe(oracle(sent, key))
        }),
        { seed: 70, numRuns: 2_000 },
      )
    }
  })

  it('finds a key percent-encoded, though nothing else in the query is escaped or a +', () => {
    expect(upstreamTarget(`/x?token=${encoded(KEY)}`, KEY)).toBe('/x')
    expect(upstreamTarget(`/x?a=1&token=${encoded(KEY)}`, KEY)).toBe('/x?a=1')
  })

  it('finds a key holding a space sent as +, as a form encodes it', () => {
    expect(upstreamTarget('/x?token=imported+key&a=1', 'imported key')).toBe('/x?a=1')
  })

  it('finds a key encoded after a byte that is no character, or half of one, as the upstream decodes it', () => {
    expect(new URLSearchParams(`t=%FF${encoded(KEY)}`).get('t')).toBe(`\ufffd${KEY}`)
    expect(upstreamTarget(`/x?t=%FF${encoded(KEY)}&a=1`, KEY)).toBe('/x?a=1')
    expect(upstreamTarget(`/x?t=%E2%82${encoded(KEY)}`, KEY)).toBe('/x')
  })

  it('passes a query without the key as sent, escapes and all, and the path whatever it holds', () => {
    const sent = '/x?q=a+b&n=%41&m=%E2%82%AC&bad=%ZZ&half=%E2%82'
    expect(upstreamTarget(sent, KEY)).toBe(sent)
    expect(upstreamTarget(`/keys/${KEY}?a=1`, KEY)).toBe(`/keys/${KEY}?a=1`)
    expect(upstreamTarget(`/keys/${KEY}`, KEY)).toBe(`/keys/${KEY}`)
  })
})
