import { randomBytes } from 'node:crypto'
import bs58 from 'bs58'

/** Id prefixes of the wire contract (Unkey's: perm, role, id for identities, rlns/rlor for rate-limit namespaces and
 * overrides). */
export type IdPrefix = 'key' | 'api' | 'req' | 'root' | 'perm' | 'role' | 'id' | 'rlns' | 'rlor'

// 6 bytes of milliseconds (good until year 10889) + 10 random bytes, base58 at a fixed width: fixed width
// makes lexicographic order equal numeric order (the Bitcoin alphabet is in ASCII order), so ids sort by
// creation time and listKeys can page with ZRANGEBYLEX.
const ID_BYTES = 16
const ID_WIDTH = 22 // ceil(16 * log(256) / log(58))
const ZERO_DIGIT = '1'

/** A new id `<prefix>_<base58>` that sorts roughly by creation time. */
export function newId(prefix: IdPrefix, nowMs: number = Date.now()): string {
  const bytes = randomBytes(ID_BYTES)
  bytes.writeUIntBE(Math.floor(nowMs), 0, 6)
  return `${prefix}_${bs58.encode(bytes).padStart(ID_WIDTH, ZERO_DIGIT)}`
}

/** The creation time (unix ms) encoded in an id made by `newId`, or undefined for anything else. */
export function idTimestamp(id: string): number | undefined {
  const underscore = id.indexOf('_')
  const body = id.slice(underscore + 1)
  if (underscore < 0 || body.length !== ID_WIDTH) return undefined
  try {
    const bytes = Buffer.from(bs58.decode(body.replace(/^1+/, '') || '1'))
    const padded = Buffer.concat([Buffer.alloc(Math.max(0, ID_BYTES - bytes.length)), bytes])
    return padded.length === ID_BYTES ? padded.readUIntBE(0, 6) : undefined
  } catch {
    return undefined
  }
}
