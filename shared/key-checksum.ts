import { crc32 } from 'node:zlib'

/**
 * The checksum of new keys: `<prefix>_<random>_<checksum>`, the checksum 6 base58 characters of the CRC32 of
 * everything before its underscore, as GitHub's tokens carry one. A key in this format whose checksum does not match
 * is a typo or a guess: verifiers refuse it before any cache lookup or Redis read. A key not in this format — made
 * before the format, or imported by hash — is verified as any other: the format is told from the key's shape (two
 * parts of base58 after the prefix, the last exactly 6 characters long), which no key made by Keygate before it, nor
 * by Unkey, has (their random part is one run of base58, without an underscore), never from its prefix.
 */

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'
export const CHECKSUM_LENGTH = 6

/** The regular expression a secret scanner needs for keys with `prefix` (for example GitHub's partner programme). */
export function checksummedKeyPattern(prefix: string): string {
  return `\\b${prefix}_[1-9A-HJ-NP-Za-km-z]{20,}_[1-9A-HJ-NP-Za-km-z]{${CHECKSUM_LENGTH}}\\b`
}

const CHECKSUMMED = /^(?:[A-Za-z0-9]{1,16}_)?[1-9A-HJ-NP-Za-km-z]{20,}_[1-9A-HJ-NP-Za-km-z]{6}$/

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
 * Whether `key` is in the checksummed format with a checksum that does not match: certainly no key Keygate made.
 * False for a key in another format (it may be an older or imported one). Cheap: a regular expression on the
 * key's characters and a CRC32, before the SHA-256 every verification computes.
 */
export function failsChecksum(key: string): boolean {
  if (!CHECKSUMMED.test(key)) return false
  const cut = key.length - CHECKSUM_LENGTH - 1
  return checksumOf(key.slice(0, cut)) !== key.slice(cut + 1)
}
