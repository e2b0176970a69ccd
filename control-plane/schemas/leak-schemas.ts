import { Type } from 'typebox'
import { StringEnum } from '../../shared/http/schema-docs.js'
import { LEAK_POLICIES } from '../../shared/leak.js'

/** A key's leak mark as getKey shows it (v1 and v2 alike): Keygate's own field. */
export const LeakedData = Type.Object(
  {
    at: Type.Integer({ description: 'When the report arrived, unix milliseconds' }),
    url: Type.Optional(Type.String({ description: 'Where the key was found, as the reporter said' })),
    source: Type.Optional(
      Type.String({ description: 'What kind of place (`content`, `commit`…), as the reporter said' }),
    ),
    reporter: Type.String({ description: '`github` (secret scanning) or `rootkey:<id>` (keys.reportLeak)' }),
    action: StringEnum([...LEAK_POLICIES], { description: "What the api's leak policy did" }),
  },
  { description: 'Set when the key was reported leaked (the latest report): see docs/leaked-keys.md' },
)
