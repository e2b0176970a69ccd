import { allowlistAllows, type CompiledAllowlist, type IpAddress } from './ip-allowlist.js'

/** The allow-lists a verification's client address must pass: the key's and its api's, each when set. */
export interface AddressRule {
  key?: CompiledAllowlist
  api?: CompiledAllowlist
}

/**
 * Whether a request from `address` may use the key: inside every list that is set (both, when the key and its api
 * each have one). No address (none could be told) passes no list.
 */
export function addressAllowed(rule: AddressRule, address: IpAddress | undefined): boolean {
  return (
    (rule.key === undefined || allowlistAllows(rule.key, address)) &&
    (rule.api === undefined || allowlistAllows(rule.api, address))
  )
}
