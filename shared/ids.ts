import { randomBytes } from 'node:crypto'
import bs58 from 'bs58'

/** Id prefixes of the wire contract (Unkey's: perm, role, id for identities, rlns/rlor for rate-limit namespaces and
 * overrides, ps for portal sessions; Keygate's own whep for webhook endpoints, msg for webhook events as Standard
 * Webhooks names them, portal for portals). */
export type IdPrefix =
  'key' | 'api' | 'req' | 'root' | 'perm' | 'role' | 'id' | 'rlns' | 'rlor' | 'whep' | 'msg' | 'portal' | 'ps'

// 6 bytes of milliseconds (good until year 10889) + 10 random bytes, base58 at a fixed width: fixed width
// makes lexicographic order equal numeric order (the Bitcoin alphabet is in ASCII order), so ids sort by
// creation time and listKeys can page with ZRANGEBYLEX.
const ID_BYTES = 16
const ID_WIDTH = 22 // ceil(16 * log(256) / log(58))
const ZERO_DIGIT = '1'

// The last id's bytes: ids made in the same millisecond by this process follow it (monotonic), so that what a
// process creates in one millisecond also lists in the order it was created (overrides, roles, keys).
let last: Buffer = Buffer.alloc(ID_BYTES)
let lastMs = -1

/** A new id `<prefix>_<base58>` that sorts by creation time (strictly, within one process). */
export function newId(prefix: IdPrefix, nowMs: number = Date.now()): string {
  const ms = Math.floor(nowMs)
  let bytes: Buffer
  if (ms === lastMs) {
    // The previous id's random part plus one (10 random bytes never overflow in practice; if they did, the
    // carry would stop at the time bytes, which stay as they are).
    bytes = Buffer.from(last)
    for (let i = ID_BYTES - 1; i >= 6; i--) {
      bytes[i] = (bytes[i]! + 1) & 0xff
      if (bytes[i] !== 0) break
    }
  } else {
    bytes = randomBytes(ID_BYTES)
    bytes.writeUIntBE(ms, 0, 6)
  }
  last = bytes
  lastMs = ms
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
