import { ApiError } from '../shared/errors.js'

/**
 * Which of Unkey's wire formats an operation shared by both answers. Where their contracts differ (which code a
 * refusal gets, which permissions a call needs up front), the operation follows the caller's.
 */
export type WireFormat = 'v1' | 'v2'

/**
 * Runs checks of a request's input as `wire` refuses them: v1 answers meta too large 413 and a name given twice 409
 * (Unkey's v1 did); v2 answers both 400 `invalid_input` (Unkey's v2 does), with the same message and fields.
 */
export function checkedInput<T>(wire: WireFormat, check: () => T): T {
  try {
    return check()
  } catch (err) {
    if (wire === 'v1' || !(err instanceof ApiError) || !['PAYLOAD_TOO_LARGE', 'CONFLICT'].includes(err.code)) throw err
    throw new ApiError('BAD_REQUEST', err.message, undefined, err.details)
  }
}
