import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { ALLOWLIST_LIMITS } from '../../shared/addresses/ip-allowlist.js'
import { LIMITS } from '../input-limits.js'

/**
 * Request fields several operations share, each with the description and example the API reference shows.
 * An example id names nothing: the description says which call returns a real one.
 */
export const ApiIdField = (description = 'The api: the `apiId` that apis.createApi returned') =>
  Type.String({ minLength: 1, maxLength: LIMITS.idLength, description, examples: [WIRE_EXAMPLES.apiId] })

export const KeyIdField = (
  description = 'The key: the `keyId` that keys.createKey returned (or apis.listKeys lists as `id`)',
) => Type.String({ minLength: 1, maxLength: LIMITS.idLength, description, examples: [WIRE_EXAMPLES.keyId] })

/** Unkey's way to ask for a key back; Keygate keeps only hashes. */
export const DecryptField = () =>
  Type.Optional(
    Type.Boolean({
      description:
        "Unkey's: show the plaintext key. Keygate keeps only a hash of each key, so `true` answers 412: leave it out",
    }),
  )

/** Unkey's `permanent` on deletes: accepted, and always what happens. */
export const PermanentField = () =>
  Type.Optional(
    Type.Boolean({
      description:
        "Unkey's soft-delete switch, accepted for compatibility: Keygate always removes a deleted key (only its hash existed)",
    }),
  )

export const CreatedAtField = () => Type.Number({ description: 'When it was created, unix milliseconds' })

export const WorkspaceIdField = () =>
  Type.String({
    description: "Unkey's workspace: Keygate has one, always `ws_keygate` (kept so that clients reading it work)",
    examples: ['ws_keygate'],
  })

/**
 * An IP allow-list as a request gives it (v1 `ipWhitelist`, v2 `ipAllowlist`): addresses and CIDR ranges, checked
 * and normalised by the operation (shared/addresses/ip-allowlist.ts). `description` says whose list it is.
 */
export const IpAllowlistField = (description: string) =>
  Type.Array(
    Type.String({
      minLength: 1,
      maxLength: ALLOWLIST_LIMITS.entryLength,
      description: 'An IPv4 or IPv6 address (`203.0.113.7`, `2001:db8::1`) or CIDR range (`10.0.0.0/8`)',
    }),
    {
      maxItems: ALLOWLIST_LIMITS.entries,
      description: `${description}: verifyKey answers FORBIDDEN to a request from any other address. At most ${ALLOWLIST_LIMITS.entries} addresses or CIDR ranges, IPv4 or IPv6, stored normalised (\`10.1.2.3/8\` as \`10.0.0.0/8\`, an address as /32 or /128)`,
      examples: [['10.0.0.0/8', '2001:db8::/32']],
    },
  )

/** A key's IP allow-list as createKey and updateKey take it. */
export const KeyAllowlistField = () =>
  IpAllowlistField("The addresses the key may be verified from (Keygate's); its api's list, if it has one, applies too")

/** An allow-list as answered: the normalised ranges. */
export const IpAllowlistResponse = (description: string) =>
  Type.Array(Type.String(), { description: `${description}: normalised CIDR ranges` })

/** The answer of a call that has nothing to say but that it was done. */
export const EmptyResponse = Type.Object({}, { description: 'Done: nothing more to say' })
