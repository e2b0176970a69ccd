import { apiSettingsAddress, type ApiSettings } from '../api-settings.js'
import { compiledAllowlist } from '../addresses/ip-allowlist.js'
import { resolveKeyContext, type EntityLookup, type KeyContext, type KeyReferences } from '../keys/key-context.js'

/** What verifying a key resolves beyond what it is granted: its api's settings, and its own allow-list. */
export interface VerifiedKeyReferences extends KeyReferences {
  apiId: string
  ipAllowlist?: readonly string[]
}

/**
 * A key's context as a verification needs it (pure): what it is granted (resolveKeyContext), and the allow-lists the
 * client's address must pass — the key's and its api's, each parsed once per stored list — or the addresses `get`
 * did not have. A key whose api sets no list and that has none of its own resolves to what it is granted, the very
 * same object: nothing is added to check per request.
 */
export function resolveVerifyContext(
  key: VerifiedKeyReferences,
  get: EntityLookup,
): KeyContext | { missing: string[] } {
  const granted = resolveKeyContext(key, get)
  const address = apiSettingsAddress(key.apiId)
  const settings = get(address) as ApiSettings | null | undefined
  if (settings === undefined) return { missing: 'missing' in granted ? [...granted.missing, address] : [address] }
  if ('missing' in granted) return granted
  const apiList = settings?.ipAllowlist
  if (key.ipAllowlist === undefined && apiList === undefined) return granted
  return {
    ...granted,
    addresses: {
      ...(key.ipAllowlist !== undefined ? { key: compiledAllowlist(key.ipAllowlist) } : {}),
      ...(apiList !== undefined ? { api: compiledAllowlist(apiList) } : {}),
    },
  }
}
