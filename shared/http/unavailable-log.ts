import { ApiError, StoreUnavailableError } from '../errors/errors.js'

/**
 * The message a 503 is logged with, so that the line names its cause: the store's failure is `store unavailable`,
 * thrown as it is or as the cause of the 503 it was answered with (forward-auth's, which says its code in a header);
 * a 503 Keygate chose (shutting down, a cache it cannot confirm, a key set it cannot fetch) is logged by its own
 * message, the failure behind it, if any, being the logged error's cause.
 */
export function unavailableMessage(err: unknown, error: ApiError): string {
  const storeFailed =
    err instanceof StoreUnavailableError || (err instanceof ApiError && err.cause instanceof StoreUnavailableError)
  return storeFailed ? 'store unavailable' : error.message
}
