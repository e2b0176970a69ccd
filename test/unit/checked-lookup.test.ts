import type { LookupAddress } from 'node:dns'
import { describe, expect, it } from 'vitest'
import {
  checkedLookup,
  REFUSED_ADDRESS,
  type ResolveAll,
} from '../../control-plane/webhooks/delivery/checked-lookup.js'

/** A resolver answering every name with `addresses`. */
const answering =
  (...addresses: string[]): ResolveAll =>
  (_hostname, _options, callback) =>
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    )

/** What the connection is given: every address (`all`), or the one it connects to. */
function lookup(resolveAll: ResolveAll, all: boolean, allowPrivate = false) {
  return new Promise<{ err: NodeJS.ErrnoException | null; result: LookupAddress[] | string }>((resolve) =>
    checkedLookup(allowPrivate, resolveAll)('hooks.example.com', { all }, (err, result) => resolve({ err, result })),
  )
}

describe('checkedLookup: the addresses a connection to an endpoint may use', () => {
  it('keeps only the public addresses of a name whose answers mix public and private ones', async () => {
    const mixed = answering('127.0.0.1', '169.254.169.254', '93.184.215.14', '::7f00:1', '2606:4700:4700::1111')
    expect((await lookup(mixed, true)).result).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:4700:4700::1111', family: 6 },
    ])
    expect((await lookup(mixed, false)).result).toBe('93.184.215.14')
  })

  it('refuses the connection when no address is left, and allows private ones when the policy does', async () => {
    const { err } = await lookup(answering('10.0.0.7', '::1'), true)
    expect(err?.code).toBe(REFUSED_ADDRESS)
    expect(err?.message).toBe('hooks.example.com: 10.0.0.7 is a private address, not a public one')
    expect((await lookup(answering('10.0.0.7'), false, true)).result).toBe('10.0.0.7')
  })
})
