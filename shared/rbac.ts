import { entityAddress } from './entity.js'

/**
 * A permission record. Its slug (the name unless given) is what keys are granted and what verifyKey's
 * `authorization.permissions` queries name; it is unique.
 */
export interface PermissionRecord {
  id: string
  name: string
  slug: string
  description?: string
  createdAt: number
  updatedAt?: number
}

/** A role: a named set of permissions (by id) that every key holding the role is granted. Unique by name. */
export interface RoleRecord {
  id: string
  name: string
  description?: string
  /** Sorted, unique; a deleted permission's id may linger here and grants nothing. */
  permissionIds: string[]
  createdAt: number
  updatedAt?: number
}

export const permissionAddress = (id: string) => entityAddress('permission', id)
export const roleAddress = (id: string) => entityAddress('role', id)
