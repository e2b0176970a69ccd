import { Type } from 'typebox'
import { v1Route } from '../http/management-route.js'
import { listAudit, MAX_SCANNED } from './list.js'

const Filter = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 256, description }))
const Record = (description: string) => Type.Record(Type.String(), Type.Unknown(), { description })
const Entry = Type.Object({
  id: Type.String({ description: "The entry's id: pass the last one as `cursor` for older entries" }),
  at: Type.Number({ description: 'When the write happened, unix milliseconds' }),
  rootKeyId: Type.String({ description: 'The root key that made it' }),
  action: Type.String({ description: 'The operation, e.g. `keys.updateKey`' }),
  apiId: Type.Optional(Type.String({ description: 'The api it touched' })),
  keyId: Type.Optional(Type.String({ description: 'The key it touched' })),
  before: Type.Optional(Record('The record before, as the API shows it (never a key or hash)')),
  after: Type.Optional(Record('The record after, as the API shows it (never a key or hash)')),
  context: Type.Optional(Record('What the call said beyond the record (keys.migrateKeys: its `migrationId`)')),
  requestId: Type.Optional(Type.String({ description: 'The request that made it' })),
  portalSession: Type.Optional(
    Type.Object(
      {
        id: Type.String({ description: 'The session (`ps_…`)' }),
        portalId: Type.String({ description: 'Its portal' }),
        externalId: Type.String({ description: 'Its customer' }),
      },
      { description: 'The customer portal session that made it (`rootKeyId`: the root key that minted the session)' },
    ),
  ),
})

const AuditListQuery = Type.Object({
  cursor: Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,15}-[0-9]{1,15}$',
      description: "The previous page's `cursor`, for older entries; leave out for the newest",
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100,
      description: 'Entries per page, 1–100 (default 100)',
      examples: [20],
    }),
  ),
  action: Filter('Only entries of this operation, e.g. `keys.updateKey`'),
  rootKeyId: Filter('Only entries made by this root key (`root_bootstrap`: KEYGATE_ROOT_KEY)'),
  apiId: Filter('Only entries about this api'),
  keyId: Filter('Only entries about this key (or, for rootKeys.* writes, this root key)'),
})

/** audit.list: Keygate's own, in v1 style; a GET, a page of 100 entries unless `limit` says otherwise. */
export const listAuditV1 = v1Route({
  operation: 'audit.list',
  method: 'GET',
  doc: {
    summary: 'Read the audit log of management writes, newest first, filtered by action, root key, api or key',
    tag: 'audit',
  },
  input: AuditListQuery,
  answer: Type.Object({
    entries: Type.Array(Entry, { description: 'Management writes, newest first' }),
    cursor: Type.Optional(
      Type.String({
        description: `Pass it as \`cursor\` for older entries; absent at the end. A filtered call reads at most ${MAX_SCANNED} entries: its page may hold fewer than \`limit\` (even none) with a cursor to go on from`,
      }),
    ),
  }),
  handle: ({ cursor, limit = 100, ...filter }, caller, deps) =>
    listAudit(deps, caller, { ...filter, cursor: cursor || undefined, limit }),
})
