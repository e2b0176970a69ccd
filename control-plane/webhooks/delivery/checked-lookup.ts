import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns'
import type { LookupFunction } from 'node:net'
import { addressRefusal } from './address-policy.js'

/** The error code of a connection refused because every address of the host is one the policy refuses. */
export const REFUSED_ADDRESS = 'EWEBHOOKADDRESS'

/** Every address of a host name (dns.lookup with `all: true`; tests pass their own answers). */
export type ResolveAll = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void

const systemResolver: ResolveAll = (hostname, options, callback) => dnsLookup(hostname, options, callback)

/**
 * The lookup a connection to an endpoint makes: every address of the host, keeping only those the policy allows (a
 * name whose answers mix public and private addresses is connected to on its public ones only), and an error coded
 * REFUSED_ADDRESS when none is left. Checked when connecting, not only when the URL was set: a name may resolve
 * elsewhere later.
 */
export function checkedLookup(allowPrivate: boolean, resolveAll: ResolveAll = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0)
      const allowed = addresses.filter((entry) => addressRefusal(entry.address, allowPrivate) === undefined)
      if (allowed.length === 0) {
        const reason = addresses[0] ? addressRefusal(addresses[0].address, allowPrivate) : 'no address'
        const refused = Object.assign(new Error(`${hostname}: ${reason}`), { code: REFUSED_ADDRESS })
        return callback(refused, '', 0)
      }
      if (options.all) return (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, allowed)
      return callback(null, allowed[0]!.address, allowed[0]!.family)
    })
  }
}
