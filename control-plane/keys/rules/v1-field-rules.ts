import { fieldError, invalid } from '../../../shared/errors/errors.js'

/**
 * Rules on Unkey v1 request fields that a schema cannot say: deprecated aliases, and what Keygate refuses by design.
 */

/** `ownerId` is the deprecated alias of `externalId`; both may be sent only if they agree. */
export function ownerIdOf(body: { externalId?: string | null; ownerId?: string | null }): string | null | undefined {
  if (body.externalId !== undefined && body.ownerId !== undefined && body.externalId !== body.ownerId) {
    throw invalid('externalId', 'differs from its alias ownerId')
  }
  return body.externalId !== undefined ? body.externalId : body.ownerId
}

/** `decrypt: true` on keys.getKey: there is no plaintext to show. */
export const noPlaintext = () =>
  fieldError('PRECONDITION_FAILED', 'decrypt', 'Keygate stores only hashes; keys cannot be shown again')
