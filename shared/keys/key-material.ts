import { hash as oneShotHash, randomBytes } from 'node:crypto'
import bs58 from 'bs58'
import { withChecksum } from './key-checksum.js'

/**
 * Keys are generated, hashed and displayed here and nowhere else.
 * At rest a key is only its SHA-256 in standard base64 (44 chars), the same hash Unkey stores.
 */

export const KEY_BYTES_DEFAULT = 16
export const KEY_BYTES_MIN = 16
export const KEY_BYTES_MAX = 255
export const KEY_PREFIX_PATTERN = '^[a-zA-Z0-9]{1,16}$'
const START_CHARS = 4

export interface NewKey {
  /** The plaintext: returned once by createKey, never stored or logged. */
  key: string
  hash: string
  /** The prefix plus the first characters of the random part, kept for display. */
  start: string
}

/**
 * A new key: `<prefix>_<random base58>_<checksum>` (shared/keys/key-checksum.ts), or without the checksum for root
 * keys, which no verifier answers for.
 */
export function generateKey(
  prefix: string | undefined,
  byteLength: number = KEY_BYTES_DEFAULT,
  checksum = true,
): NewKey {
  const head = prefix ? `${prefix}_` : ''
  const body = bs58.encode(randomBytes(byteLength))
  const key = checksum ? withChecksum(head + body) : head + body
  return { key, hash: hashKey(key), start: head + body.slice(0, START_CHARS) }
}

/** SHA-256, standard base64. One-shot `crypto.hash`: no Hash object per call, unlike createHash().update().digest(). */
export function hashKey(key: string): string {
  return oneShotHash('sha256', key, 'base64')
}

/**
 * Constant-time equality of two hashes (or any two strings): every character is compared, with no early exit, so the
 * time taken depends on the lengths alone (public: every hash is 44 characters), never on where the strings differ.
 * Written as a loop rather than with crypto.timingSafeEqual, which needs two Buffers made per call: this runs on the
 * path of every v2 verification.
 */
export function secretsEqual(a: string, b: string): boolean {
  let difference = a.length ^ b.length
  // Past b's end charCodeAt is NaN, which `^` reads as 0: the length difference above has already decided.
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}

/** Root keys are keys too, with a prefix that says what they are. */
export function generateRootKey(): NewKey {
  return generateKey('kgroot', 32, false)
}
