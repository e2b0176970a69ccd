import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { LIMITS } from './limits.js'

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
