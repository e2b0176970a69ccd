import { ApiError, badRequest, notFound } from '../../shared/errors/errors.js'
import { newId } from '../../shared/ids.js'
import { resolveKeyContext, type KeyContext, type KeyReferences } from '../../shared/keys/key-context.js'
import type { PermissionRecord, RoleRecord } from '../../shared/rbac.js'
import type { EntityStore } from '../../shared/store/entities/entity-store.js'
import type { Clock } from '../../shared/clock.js'
import type { WriteListener } from '../write-listener.js'
import { NamedRecords } from '../named-records.js'
import { may, type Principal } from '../root-keys/root-key-auth.js'
import type { AuditLog } from '../audit/audit-log.js'

/** How a request names a permission or a role: Unkey's `{id?, name?, create?}`, or a bare name. */
export interface RecordRef {
  id?: string
  name?: string
  create?: boolean
}

/**
 * What becomes of a permission a role is given by a slug no permission has yet, by Unkey's two rules:
 * `create-marked` (v1) creates only one marked `create: true` (a bare slug is a 404); `create-if-allowed` (v2)
 * creates any. Either creates only when the root key may create permissions (403 if not).
 */
export type MissingPermissionNames = 'create-marked' | 'create-if-allowed'

/** A role and the permissions it grants that still exist (a deleted one's id may linger on it), in its order. */
export interface RoleWithPermissions {
  role: RoleRecord
  permissions: PermissionRecord[]
}

/**
 * What becomes of a name in a new key's `permissions` or `roles` that no record has yet, by Unkey's two rules:
 * `create-if-allowed` (v1) creates either when the root key may create it; `create-permissions` (v2) creates a
 * missing permission without asking, and refuses a missing role (404).
 */
export type MissingGrantNames = 'create-if-allowed' | 'create-permissions'

/** The permission and role records a key references, resolved from its names: sorted ids, as its record holds them. */
export interface KeyGrants {
  permissionIds?: string[]
  roleIds?: string[]
}

/** A name resolved before anything is created: the record found, or the name to create. */
export type Planned = { id: string } | { create: string }

/** A key's permissions and roles, looked up and not yet created (Rbac.planGrants). */
export interface GrantPlan {
  permissions?: Planned[] | undefined
  roles?: Planned[] | undefined
}

// A key's context needs at most: its roles and identity, then their permissions.
const CONTEXT_ROUNDS = 3

/**
 * Permissions and roles: their records, the references keys and roles hold to them (ids), and the resolution of
 * those references into names. Nothing is fanned out: deleting a permission or a role, or changing a role's
 * permissions, is one write; every key's grants follow when they are next resolved (key-context.ts).
 */
export class Rbac {
  readonly permissions: NamedRecords<PermissionRecord>
  readonly roles: NamedRecords<RoleRecord>

  /** `audit` records the permissions and roles made on the way (createKey, `create: true`), as their own calls do. */
  constructor(
    private readonly store: EntityStore,
    private readonly clock: Clock,
    onWrite: WriteListener,
    private readonly audit?: Pick<AuditLog, 'append'>,
  ) {
    const now = () => clock.now()
    this.permissions = new NamedRecords(store, 'permission', 'permission', (p) => p.slug, now, onWrite)
    this.roles = new NamedRecords(store, 'role', 'role', (r) => r.name, now, onWrite)
  }

  async createPermission(input: { name: string; slug?: string; description?: string }): Promise<PermissionRecord> {
    const now = this.clock.now()
    return this.permissions.create({
      id: newId('perm', now),
      name: input.name,
      slug: input.slug ?? input.name,
      ...(input.description !== undefined ? { description: input.description } : {}),
      createdAt: now,
    })
  }

  async createRole(input: { name: string; description?: string; permissionIds?: string[] }): Promise<RoleRecord> {
    const now = this.clock.now()
    return this.roles.create({
      id: newId('role', now),
      name: input.name,
      ...(input.description !== undefined ? { description: input.description } : {}),
      permissionIds: [...new Set(input.permissionIds ?? [])].sort(),
      createdAt: now,
    })
  }

  /** Replaces the permissions a role grants: one write, and every key holding the role follows. */
  async setRolePermissions(roleId: string, permissionIds: string[]): Promise<RoleRecord> {
    const now = this.clock.now()
    return this.roles.update(roleId, (role) => ({
      ...role,
      permissionIds: [...new Set(permissionIds)].sort(),
      updatedAt: now,
    }))
  }

  /**
   * The ids of the permissions a request names, by id or by slug. A slug with no record is created when the
   * request allows it (`create: true`, or `createMissing` as keys.createKey does) and the root key may create
   * permissions; otherwise it is a 404 (an id with no record always is). `createMissing: 'by-operation'` creates
   * them with no rbac permission asked: Unkey's v2 keys.createKey and updateKey make the slugs they name so. Every
   * name is looked up (and every 404 or 403 thrown) before any is created, so a refused call makes none;
   * `beforeCreate` may refuse the call too, on what would be found and made.
   */
  async permissionIdsOf(
    refs: readonly (RecordRef | string)[],
    principal: Principal,
    createMissing: boolean | 'by-operation',
    beforeCreate?: (planned: readonly Planned[]) => void,
  ) {
    const planned = await this.planPermissions(refs, principal, createMissing)
    beforeCreate?.(planned)
    return this.made(planned, (name) => this.createOrFindPermission(name, principal))
  }

  /** The ids of the roles a request names, by id or by name; a missing one is created as permissions are. */
  async roleIdsOf(refs: readonly (RecordRef | string)[], principal: Principal, createMissing: boolean) {
    const planned = await this.planRoles(refs, principal, createMissing)
    return this.made(planned, (name) => this.createOrFindRole(name, principal))
  }

  /**
   * Plans a key's `permissions` and `roles` (in that order): every name looked up, and every 404 or 403 thrown,
   * before anything is created, so that a call naming several lists (or several keys) refuses before the first of
   * them creates a record. Empty lists name nothing. makeGrants carries a plan out.
   */
  async planGrants(
    names: { permissions?: readonly (RecordRef | string)[]; roles?: readonly (RecordRef | string)[] },
    principal: Principal,
    createMissing: boolean,
  ): Promise<GrantPlan> {
    return {
      permissions: names.permissions?.length
        ? await this.planPermissions(names.permissions, principal, createMissing)
        : undefined,
      roles: names.roles?.length ? await this.planRoles(names.roles, principal, createMissing) : undefined,
    }
  }

  /**
   * The records a new key's `permissions` and `roles` name, by `missing`'s rule; empty lists name nothing. Both
   * lists are looked up, once, before either creates a record: a key refused for a role leaves no permission behind.
   */
  async grantsOfNames(
    names: { permissions?: readonly string[] | undefined; roles?: readonly string[] | undefined },
    missing: MissingGrantNames,
    principal: Principal,
  ): Promise<KeyGrants> {
    const permissions = names.permissions?.length ? names.permissions : undefined
    const roles = names.roles?.length ? names.roles : undefined
    if (missing === 'create-if-allowed') {
      return sortedGrants(
        await this.makeGrants(await this.planGrants({ permissions, roles }, principal, true), principal),
      )
    }
    const roleIds = roles && (await this.roleIdsOf(roles, principal, false))
    const permissionIds = permissions && (await this.permissionIdsOf(permissions, principal, 'by-operation'))
    return sortedGrants({ permissionIds, roleIds })
  }

  /** The ids a plan names, its missing names created (permissions first). */
  async makeGrants(plan: GrantPlan, principal: Principal): Promise<{ permissionIds?: string[]; roleIds?: string[] }> {
    return {
      permissionIds:
        plan.permissions && (await this.made(plan.permissions, (n) => this.createOrFindPermission(n, principal))),
      roleIds: plan.roles && (await this.made(plan.roles, (n) => this.createOrFindRole(n, principal))),
    }
  }

  private async planPermissions(
    refs: readonly (RecordRef | string)[],
    principal: Principal,
    createMissing: boolean | 'by-operation',
  ): Promise<Planned[]> {
    const planned: Planned[] = []
    for (const ref of refs.map(asRef)) {
      const found =
        ref.id !== undefined ? await this.permissions.get(ref.id) : await this.permissions.findByName(ref.name!)
      if (found) {
        planned.push({ id: found.id })
        continue
      }
      if (ref.id !== undefined) throw notFound('permission', `permission ${ref.id} not found`)
      if (!(ref.create ?? createMissing))
        throw notFound('permission', `permission ${JSON.stringify(ref.name)} not found`)
      if (createMissing !== 'by-operation' && !may(principal, 'rbac', '*', 'create_permission')) {
        throw new ApiError(
          'INSUFFICIENT_PERMISSIONS',
          `permission ${JSON.stringify(ref.name)} does not exist, and creating it needs rbac.*.create_permission`,
        )
      }
      planned.push({ create: ref.name! })
    }
    return planned
  }

  private async planRoles(
    refs: readonly (RecordRef | string)[],
    principal: Principal,
    createMissing: boolean,
  ): Promise<Planned[]> {
    const planned: Planned[] = []
    for (const ref of refs.map(asRef)) {
      const found = ref.id !== undefined ? await this.roles.get(ref.id) : await this.roles.findByName(ref.name!)
      if (found) {
        planned.push({ id: found.id })
        continue
      }
      if (ref.id !== undefined) throw notFound('role', `role ${ref.id} not found`)
      if (!(ref.create ?? createMissing)) throw notFound('role', `role ${JSON.stringify(ref.name)} not found`)
      if (!may(principal, 'rbac', '*', 'create_role')) {
        throw new ApiError(
          'INSUFFICIENT_PERMISSIONS',
          `role ${JSON.stringify(ref.name)} does not exist, and creating it needs rbac.*.create_role`,
        )
      }
      planned.push({ create: ref.name! })
    }
    return planned
  }

  /** The ids of a plan, in its order, each missing name created once. */
  private async made(planned: readonly Planned[], create: (name: string) => Promise<string>): Promise<string[]> {
    const createdIds = new Map<string, string>()
    const ids: string[] = []
    for (const step of planned) {
      if ('id' in step) {
        ids.push(step.id)
        continue
      }
      const id = createdIds.get(step.create) ?? (await create(step.create))
      createdIds.set(step.create, id)
      ids.push(id)
    }
    return [...new Set(ids)]
  }

  /** Each role with the permissions it grants that still exist; a permission is read once however many grant it. */
  async withPermissions(roles: readonly RoleRecord[]): Promise<RoleWithPermissions[]> {
    const reads = new Map<string, Promise<PermissionRecord | null>>()
    const read = (id: string) => {
      const started = reads.get(id) ?? this.permissions.get(id)
      reads.set(id, started)
      return started
    }
    return Promise.all(
      roles.map(async (role) => {
        const permissions = await Promise.all(role.permissionIds.map(read))
        return { role, permissions: permissions.filter((permission) => permission !== null) }
      }),
    )
  }

  /** What a key is granted and who it belongs to, read from the store (management reads: getKey, listKeys…). */
  async contextOf(key: KeyReferences, memo: Map<string, unknown> = new Map()): Promise<KeyContext> {
    for (let round = 0; round < CONTEXT_ROUNDS; round++) {
      const result = resolveKeyContext(key, (address) => memo.get(address))
      if (!('missing' in result)) return result
      const found = await Promise.all(result.missing.map((address) => this.store.getEntity(address)))
      result.missing.forEach((address, i) => memo.set(address, found[i]?.doc ?? null))
    }
    throw new ApiError('CONFLICT', "the key's roles and permissions kept changing while they were read; retry")
  }

  // Two requests may create the same missing slug at once: the loser uses the winner's record.
  private async createOrFindPermission(slug: string, principal: Principal): Promise<string> {
    try {
      const made = await this.createPermission({ name: slug })
      await this.audit?.append({ rootKeyId: principal.rootKeyId }, 'permissions.createPermission', {
        after: { ...made },
      })
      return made.id
    } catch (err) {
      const winner = err instanceof ApiError && err.code === 'CONFLICT' && (await this.permissions.findByName(slug))
      if (winner) return winner.id
      throw err
    }
  }

  private async createOrFindRole(name: string, principal: Principal): Promise<string> {
    try {
      const made = await this.createRole({ name })
      await this.audit?.append({ rootKeyId: principal.rootKeyId }, 'permissions.createRole', { after: { ...made } })
      return made.id
    } catch (err) {
      const winner = err instanceof ApiError && err.code === 'CONFLICT' && (await this.roles.findByName(name))
      if (winner) return winner.id
      throw err
    }
  }
}

/**
 * Throws the contract's 403 unless the principal may give roles permissions (`rbac.*.add_permission_to_role`) and,
 * when `removes`, take them away (`remove_permission_from_role`): Unkey's rbac actions on roles, each one missing
 * named.
 */
export function requireRolePermissionActions(principal: Principal, removes: boolean): void {
  const needed = ['add_permission_to_role', ...(removes ? ['remove_permission_from_role' as const] : [])] as const
  const missing = needed.filter((action) => !may(principal, 'rbac', '*', action))
  if (missing.length > 0) {
    throw new ApiError(
      'INSUFFICIENT_PERMISSIONS',
      `the root key needs ${missing.map((a) => `rbac.*.${a}`).join(' and ')}`,
    )
  }
}

function asRef(ref: RecordRef | string): RecordRef {
  if (typeof ref === 'string') return { name: ref }
  if (ref.id === undefined && ref.name === undefined) throw badRequest('each item needs an id or a name')
  return ref
}

/** Grants as a key record holds them: sorted ids. */
export function sortedGrants(grants: KeyGrants): KeyGrants {
  return {
    permissionIds: grants.permissionIds && [...grants.permissionIds].sort(),
    roleIds: grants.roleIds && [...grants.roleIds].sort(),
  }
}
