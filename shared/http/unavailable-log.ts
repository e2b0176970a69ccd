import { StoreUnavailableError, type ApiError } from '../errors.js'

/**
 * The message a 503 is logged with, so that the line names its cause: the store's failure is `store unavailable`; a
 * 503 Keygate chose (shutting down, a cache it cannot confirm, a key set it cannot fetch) is logged by its own
 * message, the failure behind it, if any, being the logged error's cause.
 */
export function unavailableMessage(err: unknown, error: ApiError): string {
  return err instanceof StoreUnavailableError ? 'store unavailable' : error.message
}
