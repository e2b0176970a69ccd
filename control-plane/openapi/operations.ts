/**
 * What the OpenAPI document says of each operation beyond its schemas: a summary, and whether it takes a
 * root key. The schemas themselves come from the routes (the single source of truth); this table only names
 * them for people. test/integration/openapi.test.ts fails if a route has no entry here, or an entry no route.
 */
export interface OperationDoc {
  summary: string
  /** Management calls need `Authorization: Bearer <root key>`; verification and health do not. */
  rootKey: boolean
}

export const OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  'apis.createApi': { summary: 'Create an api (a namespace for keys)', rootKey: true },
  'apis.getApi': { summary: 'Read an api', rootKey: true },
  'apis.deleteApi': { summary: 'Delete an api and stop its keys from verifying', rootKey: true },
  'apis.listKeys': { summary: "List an api's keys, a page at a time", rootKey: true },
  'apis.deleteKeys': { summary: "Delete all of an api's keys", rootKey: true },
  'keys.createKey': { summary: 'Create a key (the key is shown once; only its hash is stored)', rootKey: true },
  'keys.getKey': { summary: 'Read a key', rootKey: true },
  'keys.updateKey': { summary: 'Change a key: enable or disable it, expiry, meta, credits, rate limit', rootKey: true },
  'keys.deleteKey': { summary: 'Delete a key', rootKey: true },
  'keys.rerollKey': {
    summary: 'Issue a new key in place of one, the old one expiring after a grace period',
    rootKey: true,
  },
  'keys.whoami': { summary: 'Find the key record of a key', rootKey: true },
  'keys.updateRemaining': { summary: "Set, increment or decrement a key's credits", rootKey: true },
  'keys.getVerifications': { summary: "A key's verification counts per hour or day", rootKey: true },
  'keys.addPermissions': { summary: 'Add permissions to a key', rootKey: true },
  'keys.setPermissions': { summary: "Replace a key's permissions", rootKey: true },
  'keys.removePermissions': { summary: 'Remove permissions from a key', rootKey: true },
  'keys.addRoles': { summary: 'Add roles to a key', rootKey: true },
  'keys.setRoles': { summary: "Replace a key's roles", rootKey: true },
  'keys.removeRoles': { summary: 'Remove roles from a key', rootKey: true },
  'audit.list': { summary: 'Read the audit log of management writes, newest first', rootKey: true },
  'rootKeys.createRootKey': {
    summary: 'Create a root key with at most the permissions of the caller (shown once; only its hash is stored)',
    rootKey: true,
  },
  'rootKeys.listRootKeys': { summary: 'List the stored root keys (never a key or a hash)', rootKey: true },
  'rootKeys.revokeRootKey': { summary: 'Revoke a root key: refused from the next call on', rootKey: true },
  'rootKeys.rollRootKey': {
    summary: 'Replace a root key by a new one with the same name and permissions (shown once); the old one is revoked',
    rootKey: true,
  },
  'keys.verifyKey': {
    summary: 'Verify a key (always 200 for a well-formed request: `valid` and `code` say the verdict)',
    rootKey: false,
  },
  liveness: { summary: 'Whether the service is up, and which store it runs on', rootKey: false },
}

/** `/v1/keys.createKey` → `keys.createKey`; `/v1/liveness` → `liveness`. */
export function operationIdOf(url: string): string | undefined {
  return /^\/v1\/([A-Za-z]+(?:\.[A-Za-z]+)?)$/.exec(url)?.[1]
}
