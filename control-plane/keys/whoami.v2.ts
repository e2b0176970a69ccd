import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v2Route } from '../http/management-route.js'
import { KeyData, toKeyData } from './wire/key-data.v2.js'
import { whoami } from './whoami.js'

const WhoamiBody = Type.Object(
  {
    key: Type.String({
      minLength: 1,
      maxLength: 512,
      description: 'A key itself (as keys.createKey returned it once), to find its record',
      examples: [WIRE_EXAMPLES.key],
    }),
  },
  { additionalProperties: false, examples: [{ key: WIRE_EXAMPLES.key }] },
)

/** v2's keys.whoami: as Unkey's, to a root key that may not read it, the key does not exist (404). */
export const whoamiV2 = v2Route({
  operation: 'keys.whoami',
  doc: { summary: 'Find the key record of a key, by the key itself', tag: 'v2 keys' },
  body: WhoamiBody,
  data: KeyData,
  handle: async ({ key }, caller, deps) => {
    const { record, context } = await whoami(deps, caller, key)
    return { data: toKeyData(record, context) }
  },
})
