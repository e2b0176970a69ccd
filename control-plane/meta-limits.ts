import { ApiError, badRequest } from '../shared/errors.js'
import { LIMITS } from './schemas/key-schemas.js'

/** meta is the client's own JSON: bounded in size (413) and nesting (400) so one key cannot hog the store. */
export function checkMeta(meta: Record<string, unknown> | null | undefined): void {
  if (meta === null || meta === undefined) return
  if (Buffer.byteLength(JSON.stringify(meta)) > LIMITS.metaBytes) {
    throw new ApiError('PAYLOAD_TOO_LARGE', `meta: is larger than ${LIMITS.metaBytes} bytes`)
  }
  if (depth(meta) > LIMITS.metaDepth) throw badRequest(`meta: nests deeper than ${LIMITS.metaDepth} levels`)
}

function depth(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0
  let deepest = 0
  for (const child of Object.values(value)) deepest = Math.max(deepest, depth(child))
  return deepest + 1
}
