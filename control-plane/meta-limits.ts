import { inputRuleError, invalid } from '../shared/errors.js'
import { LIMITS } from './schemas/key-schemas.js'

/**
 * meta is the client's own JSON: bounded in nesting (400) and size (an input rule: v1 413, v2 400) so one key
 * cannot hog the store.
 * Depth is checked first and without recursion: a deeply nested value would overflow the stack of any
 * recursive walk, JSON.stringify included.
 */
export function checkMeta(meta: Record<string, unknown> | null | undefined): void {
  if (meta === null || meta === undefined) return
  if (nestsDeeperThan(meta, LIMITS.metaDepth)) throw invalid('meta', `nests deeper than ${LIMITS.metaDepth} levels`)
  if (Buffer.byteLength(JSON.stringify(meta)) > LIMITS.metaBytes) {
    throw inputRuleError('PAYLOAD_TOO_LARGE', 'meta', `is larger than ${LIMITS.metaBytes} bytes`)
  }
}

function nestsDeeperThan(root: object, limit: number): boolean {
  const stack: [unknown, number][] = [[root, 1]]
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!
    if (depth > limit) return true
    for (const child of Object.values(value as object)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1])
    }
  }
  return false
}
