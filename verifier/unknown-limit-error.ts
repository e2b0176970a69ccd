import { ApiError } from '../shared/errors/errors.js'

/** Who was asked for a limit it does not hold: the key, and its identity when it has one. */
export interface UnknownLimit {
  name: string
  keyId: string
  identity?: { id: string; externalId: string }
}

/**
 * verifyKey named a rate limit that is neither the key's nor its identity's, without limit and duration to define
 * one: the caller's mistake. v1 answers it 400 (as Unkey's v1 did); v2 answers 412 (as Unkey's v2 does) from what
 * this carries.
 */
export class UnknownLimitError extends ApiError {
  constructor(
    message: string,
    readonly limit: UnknownLimit,
  ) {
    super('BAD_REQUEST', message)
  }
}
