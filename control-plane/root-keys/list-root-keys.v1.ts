import { Type } from 'typebox'
import { v1Route } from '../http/management-route.js'
import { rootKeyView } from './root-keys.js'
import { listRootKeys } from './list-root-keys.js'

const ListRootKeysQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 100, description: 'root keys per page, at most' }),
  ),
  cursor: Type.Optional(
    Type.String({ maxLength: 256, description: 'where the page starts: the cursor of the previous page' }),
  ),
})

/** A stored root key as clients see it: this schema is the allow-list that keeps the hash off the wire. */
const RootKeyResponse = Type.Object({
  id: Type.String({ description: 'the id of the root key (root_…)' }),
  name: Type.Optional(Type.String({ description: 'the name it was given' })),
  start: Type.Optional(
    Type.String({ description: 'the first characters of the root key, to recognise it by (absent on early ones)' }),
  ),
  permissions: Type.Array(Type.String(), { description: 'what the root key may do' }),
  createdAt: Type.Number({ description: 'when it was created, unix ms' }),
  lastUsedAt: Type.Optional(
    Type.Number({
      description: 'when it last authenticated a call, unix ms (recorded about once a minute); absent if never',
    }),
  ),
})

/** rootKeys.listRootKeys: a GET; the stored root keys, oldest first, never a key or a hash. */
export const listRootKeysV1 = v1Route({
  operation: 'rootKeys.listRootKeys',
  method: 'GET',
  doc: { summary: 'List the stored root keys (never a key or a hash)', tag: 'rootKeys' },
  input: ListRootKeysQuery,
  answer: Type.Object({
    rootKeys: Type.Array(RootKeyResponse, { description: 'the root keys of this page, oldest first' }),
    cursor: Type.Optional(
      Type.String({ description: 'pass it as `cursor` for the next page; absent on the last page' }),
    ),
  }),
  handle: async ({ cursor, limit }, caller, deps) => {
    const page = await listRootKeys(deps, caller, { cursor, limit: limit ?? 100 })
    return { rootKeys: page.rootKeys.map(rootKeyView), cursor: page.cursor }
  },
})
