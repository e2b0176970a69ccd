import { ApiError, badRequest } from '../shared/errors.js'
import { NOT_YET_SUPPORTED } from './schemas/key-schemas.js'

/** Fields of Unkey's v1 createKey/updateKey that this version does not implement yet: a clear 400, never ignored. */
export function refuseNotYetSupported(body: Record<string, unknown>): void {
  for (const field of NOT_YET_SUPPORTED) {
    if (body[field] !== undefined) throw badRequest(`${field}: is not supported by this Keygate version yet`)
  }
}

/** `ownerId` is the deprecated alias of `externalId`; both may be sent only if they agree. */
export function ownerIdOf(body: { externalId?: string | null; ownerId?: string | null }): string | null | undefined {
  if (body.externalId !== undefined && body.ownerId !== undefined && body.externalId !== body.ownerId) {
    throw badRequest('externalId: differs from its alias ownerId')
  }
  return body.externalId !== undefined ? body.externalId : body.ownerId
}

export const notRecoverable = () =>
  new ApiError('PRECONDITION_FAILED', 'recoverable: Keygate stores only hashes; a key cannot be shown again')
