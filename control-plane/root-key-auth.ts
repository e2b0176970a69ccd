import type { FastifyRequest } from 'fastify'
import { ApiError } from '../shared/errors.js'
import { hashKey, secretsEqual } from '../shared/key-material.js'
import type { RootKeyAction } from '../shared/root-key-actions.js'
import type { ManagementStore } from '../shared/store/management-store.js'

/** Who made a management call. */
export interface Principal {
  rootKeyId: string
  permissions: readonly string[]
}

const BOOTSTRAP_ID = 'root_bootstrap'

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the root-key hook on management routes. */
    principal: Principal | null
  }
}

/** The authenticated caller of a management route (the hook ran before the handler). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal)
    throw new ApiError('UNAUTHORIZED', 'authorization: send a root key as `Authorization: Bearer <root key>`')
  return request.principal
}

/**
 * Root-key authentication: the bearer is hashed and looked up by hash (only hashes are stored); the
 * bootstrap key from KEYGATE_ROOT_KEY is compared by hash in constant time.
 */
export class RootKeyAuth {
  private readonly bootstrapHash: string | undefined

  constructor(
    private readonly store: ManagementStore,
    bootstrapRootKey: string | undefined,
  ) {
    this.bootstrapHash = bootstrapRootKey === undefined ? undefined : hashKey(bootstrapRootKey)
  }

  async authenticate(request: FastifyRequest): Promise<Principal> {
    const header = request.headers.authorization
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null
    if (!match)
      throw new ApiError('UNAUTHORIZED', 'authorization: send a root key as `Authorization: Bearer <root key>`')
    const hash = hashKey(match[1]!)
    if (this.bootstrapHash !== undefined && secretsEqual(hash, this.bootstrapHash)) {
      return { rootKeyId: BOOTSTRAP_ID, permissions: ['*'] }
    }
    const rootKey = await this.store.getRootKeyByHash(hash)
    if (!rootKey) throw new ApiError('UNAUTHORIZED', 'authorization: the root key is not valid')
    return { rootKeyId: rootKey.id, permissions: rootKey.permissions }
  }
}

/** Whether the principal may do `action` on `apiId` (`*` = on every api). */
export function can(principal: Principal, apiId: string, action: RootKeyAction): boolean {
  return principal.permissions.some((permission) => {
    if (permission === '*') return true
    const [scope, id, granted] = permission.split('.')
    return scope === 'api' && (id === '*' || id === apiId) && (granted === action || granted === '*')
  })
}

/** Throws the contract's 403 unless the principal may do every one of `actions` on `apiId`. */
export function requirePermission(principal: Principal, apiId: string, ...actions: RootKeyAction[]): void {
  const missing = actions.filter((action) => !can(principal, apiId, action))
  if (missing.length > 0) {
    throw new ApiError(
      'INSUFFICIENT_PERMISSIONS',
      `the root key needs ${missing.map((action) => `api.${apiId}.${action}`).join(' and ')}`,
    )
  }
}
