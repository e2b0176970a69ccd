import type { ErrorCode } from '../../shared/errors.js'
import type { OperationDoc } from './operation-doc.js'

/** An operation that names no record that could be missing (a create, a list): no 404, as Unkey documents them. */
const NAMES_NO_RECORD: ErrorCode[] = [
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'INSUFFICIENT_PERMISSIONS',
  'RATE_LIMITED',
  'INTERNAL_SERVER_ERROR',
  'UNAVAILABLE',
]
/** A create of a record with a unique name or externalId: 409 when it exists already. */
const CREATES: ErrorCode[] = [...NAMES_NO_RECORD, 'CONFLICT']

/**
 * Unkey's v2 wire format: `POST /v2/<service>.<method>`, every answer in `{meta, data}`, every error a problem body.
 * Ids are `v2.` and the operation (`v2.keys.createKey` is served at `/v2/keys.createKey`). Every operation but
 * liveness takes a root key, verifyKey included.
 */
export const V2_OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  'v2.apis.createApi': {
    summary: 'Create an api (a namespace for keys)',
    rootKey: true,
    tag: 'v2 apis',
    errors: NAMES_NO_RECORD,
  },
  'v2.apis.getApi': { summary: 'Read an api', rootKey: true, tag: 'v2 apis' },
  'v2.apis.listKeys': {
    summary: "List an api's keys, a page at a time (`pagination.cursor` asks for the next)",
    rootKey: true,
    tag: 'v2 apis',
  },
  'v2.apis.deleteApi': { summary: 'Delete an api and stop its keys from verifying', rootKey: true, tag: 'v2 apis' },
  'v2.keys.verifyKey': {
    summary: 'Verify a key (200 for a well-formed request: `valid` and `code` say the verdict)',
    description:
      'What your API calls, usually on the verifier sidecar. Needs a root key with `api.*.verify_key` or `api.<apiId>.verify_key`; a root key without it learns nothing about the key: the answer is `valid: false` with `code: NOT_FOUND`, as Unkey answers. A key that does not verify is an answer, not an error.',
    rootKey: true,
    tag: 'v2 keys',
    // Served beside the management API, not in it: no management rate limit (a key's own limits are verdicts).
    errors: ['BAD_REQUEST', 'UNAUTHORIZED', 'INTERNAL_SERVER_ERROR', 'UNAVAILABLE'],
  },
  'v2.keys.migrateKeys': {
    summary: 'Import existing keys by their hash, without reissuing them',
    description:
      'With `migrationId: "sha256"`, each `hash` is the SHA-256 of the key, base64-encoded (what Keygate stores). A hash that is stored already is listed in `failed`, never inserted twice.',
    rootKey: true,
    tag: 'v2 keys',
  },
  'v2.keys.addPermissions': { summary: 'Add permissions to a key', rootKey: true, tag: 'v2 keys' },
  'v2.keys.removePermissions': { summary: 'Remove permissions from a key', rootKey: true, tag: 'v2 keys' },
  'v2.keys.setPermissions': { summary: "Replace a key's direct permissions", rootKey: true, tag: 'v2 keys' },
  'v2.keys.addRoles': { summary: 'Add roles to a key', rootKey: true, tag: 'v2 keys' },
  'v2.keys.removeRoles': { summary: 'Remove roles from a key', rootKey: true, tag: 'v2 keys' },
  'v2.keys.setRoles': { summary: "Replace a key's roles", rootKey: true, tag: 'v2 keys' },
  'v2.identities.createIdentity': {
    summary: 'Create an identity (a user or organisation): keys with its externalId share its meta and limits',
    rootKey: true,
    tag: 'v2 identities',
    errors: CREATES,
  },
  'v2.identities.getIdentity': {
    summary: 'Read an identity by its id or externalId',
    rootKey: true,
    tag: 'v2 identities',
  },
  'v2.identities.listIdentities': {
    summary: 'List identities, a page at a time',
    rootKey: true,
    tag: 'v2 identities',
    errors: NAMES_NO_RECORD,
  },
  'v2.identities.updateIdentity': {
    summary: "Replace an identity's meta or rate limits (every key of it follows)",
    rootKey: true,
    tag: 'v2 identities',
  },
  'v2.identities.deleteIdentity': {
    summary: 'Delete an identity: its keys keep their externalId and lose its meta and limits',
    rootKey: true,
    tag: 'v2 identities',
  },
  'v2.permissions.createPermission': {
    summary: 'Create a permission (keys are granted it by slug)',
    rootKey: true,
    tag: 'v2 permissions',
    errors: CREATES,
  },
  'v2.permissions.getPermission': {
    summary: 'Read a permission by its id or slug',
    rootKey: true,
    tag: 'v2 permissions',
  },
  'v2.permissions.listPermissions': {
    summary: 'List permissions, a page at a time',
    rootKey: true,
    tag: 'v2 permissions',
    errors: NAMES_NO_RECORD,
  },
  'v2.permissions.deletePermission': {
    summary: 'Delete a permission: no key or role grants it any more',
    rootKey: true,
    tag: 'v2 permissions',
  },
  'v2.permissions.createRole': { summary: 'Create a role', rootKey: true, tag: 'v2 permissions', errors: CREATES },
  'v2.permissions.getRole': {
    summary: 'Read a role and the permissions it grants, by its id or name',
    rootKey: true,
    tag: 'v2 permissions',
  },
  'v2.permissions.listRoles': {
    summary: 'List roles, a page at a time',
    rootKey: true,
    tag: 'v2 permissions',
    errors: NAMES_NO_RECORD,
  },
  'v2.permissions.deleteRole': {
    summary: 'Delete a role: its keys lose what it granted',
    rootKey: true,
    tag: 'v2 permissions',
  },
  'v2.permissions.setRolePermissions': {
    summary: 'Replace the permissions a role grants (every key holding it follows)',
    description: 'Every verifier applies the change within the revocation bound.',
    rootKey: true,
    tag: 'v2 permissions',
  },
  'v2.ratelimit.limit': {
    summary: 'Count a call of an identifier in a namespace: may it go on?',
    description:
      'Also served by the verifier sidecar, from memory (`@unkey/ratelimit` calls it). Needs `ratelimit.<namespaceId|*>.limit`; a namespace named for the first time is made when the root key also has `ratelimit.*.create_namespace`. A call over the limit is an answer (`success: false`), not an error.',
    rootKey: true,
    tag: 'v2 ratelimit',
  },
  'v2.ratelimit.multiLimit': {
    summary: 'Count a call against several limits at once: may it go on?',
    description:
      'Also served by the verifier sidecar. Needs `ratelimit.*.limit`, or `ratelimit.<namespaceId>.limit` on every namespace named.',
    rootKey: true,
    tag: 'v2 ratelimit',
  },
  'v2.ratelimit.setOverride': {
    summary: "Set an identifier's (or a `*` pattern's) limit in a namespace, in place of the one calls send",
    description: 'Every verifier applies it within the revocation bound.',
    rootKey: true,
    tag: 'v2 ratelimit',
  },
  'v2.ratelimit.getOverride': { summary: "Read an identifier's override", rootKey: true, tag: 'v2 ratelimit' },
  'v2.ratelimit.listOverrides': {
    summary: "List a namespace's overrides, a page at a time",
    rootKey: true,
    tag: 'v2 ratelimit',
  },
  'v2.ratelimit.deleteOverride': {
    summary: "Delete an identifier's override: calls get the limit they send again",
    rootKey: true,
    tag: 'v2 ratelimit',
  },
  'v2.liveness': {
    summary: 'Whether the service is up (the one v2 operation without a root key)',
    rootKey: false,
    tag: 'v2 health',
    errors: [],
  },
}
