import { crc32 } from 'node:zlib'

/**
 * The checksum of new keys: `<prefix>_<random>_<checksum>`, the checksum 6 base58 characters of the CRC32 of
 * everything before its underscore, as GitHub's tokens carry one. A key in this format whose checksum does not match
 * is a typo or a guess: verifiers refuse it before any cache lookup or Redis read. A key not in this format — made
 * before the format, or imported by hash — is verified as any other. The format is told from the key's end (a run of
 * at least 20 base58 characters, `_`, 6 base58 characters), which no key made by Keygate before it, nor by Unkey, has
 * (their random part is the last, one run of base58 of at least 21 characters); never from its prefix, which may be
 * anything a key was given (a rerolled key takes an imported key's), so every key generateKey makes is protected.
 */

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'
const BASE58_CLASS = '[1-9A-HJ-NP-Za-km-z]'
export const CHECKSUM_LENGTH = 6
/** The shortest random part the format has: base58 of 16 bytes (KEY_BYTES_MIN) is 21 or 22 characters. */
const RANDOM_MIN = 20

/**
 * The regular expression a secret scanner needs for keys with `prefix` (for example GitHub's partner programme):
 * the prefix is matched as written, whatever characters it holds.
 */
export function checksummedKeyPattern(prefix: string): string {
  const head = prefix === '' ? '' : `${prefix.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')}_`
  // A word boundary before the key, unless it starts with a character that is no word's (\b would then need one).
  const boundary = /^\w/.test(head) || head === '' ? '\\b' : ''
  return `${boundary}${head}${BASE58_CLASS}{${RANDOM_MIN},}_${BASE58_CLASS}{${CHECKSUM_LENGTH}}\\b`
}

const RANDOM_PART = new RegExp(`^${BASE58_CLASS}{${RANDOM_MIN},}$`)
const CHECKSUM_PART = new RegExp(`^${BASE58_CLASS}{${CHECKSUM_LENGTH}}$`)

/** The checksum of `text`: its CRC32 in base58, at a fixed width of CHECKSUM_LENGTH (58^6 > 2^32). */
export function checksumOf(text: string): string {
  let value = crc32(text)
  let digits = ''
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    digits = BASE58[value % 58]! + digits
    value = Math.floor(value / 58)
  }
  return digits
}

/** `body` with its checksum: what generateKey hands out. */
export function withChecksum(body: string): string {
  return `${body}_${checksumOf(body)}`
}

/**
 * Whether `key` is in the checksummed format: it ends in `_` and 6 base58 characters, after a random part of at
 * least 20 base58 characters that starts the key or follows a `_`. Linear in the key's length (two slices and two
 * anchored tests, no backtracking), as it runs on every verification of any key a client sends.
 */
export function isChecksummed(key: string): boolean {
  const cut = key.length - CHECKSUM_LENGTH - 1
  if (cut < RANDOM_MIN || key[cut] !== '_' || !CHECKSUM_PART.test(key.slice(cut + 1))) return false
  return RANDOM_PART.test(key.slice(key.lastIndexOf('_', cut - 1) + 1, cut))
}

/**
 * Whether `key` is in the checksummed format with a checksum that does not match: certainly no key Keygate made.
 * False for a key in another format (it may be an older or imported one). Cheap: the shape and a CRC32, before the
 * SHA-256 every verification computes.
 */
export function failsChecksum(key: string): boolean {
  if (!isChecksummed(key)) return false
  const cut = key.length - CHECKSUM_LENGTH - 1
  return checksumOf(key.slice(0, cut)) !== key.slice(cut + 1)
}
