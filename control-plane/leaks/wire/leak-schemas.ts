import { Type } from 'typebox'
import { StringEnum } from '../../../shared/http/schema-docs.js'
import { LEAK_POLICIES } from '../../../shared/leak.js'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'

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

/** keys.reportLeak's body, the same in v1 and v2. */
export const ReportLeakBody = Type.Object(
  {
    key: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'The key that leaked, as it was found',
      examples: [WIRE_EXAMPLES.key],
    }),
    url: Type.Optional(Type.String({ maxLength: 2048, description: 'Where it was found' })),
    source: Type.Optional(
      Type.String({
        maxLength: 256,
        description: 'What kind of place it was found in (`content`, `commit`, `paste`…)',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ key: WIRE_EXAMPLES.key, url: 'https://example.com/paste/1', source: 'paste' }],
  },
)

/** What was done: the key reported, its api, and the api's leak policy as applied. */
export const ReportLeakAnswer = Type.Object({
  keyId: Type.String({ description: 'The key reported' }),
  apiId: Type.String({ description: 'Its api' }),
  action: StringEnum([...LEAK_POLICIES], {
    description: "What its api's leak policy did: `notify` marked it; `disable` also disabled it; `delete` deleted it",
  }),
})
