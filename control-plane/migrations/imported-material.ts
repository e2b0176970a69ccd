import { invalid, type ApiError } from '../../shared/errors/errors.js'
import { failsChecksum } from '../../shared/keys/key-checksum.js'
import { hashKey } from '../../shared/keys/key-material.js'
import type { KeyMaterial } from '../keys/key-fields.js'

/** SHA-256 in standard base64: 43 characters and one `=`. */
const SHA256_BASE64 = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/

const CHECKSUM_MISMATCH =
  'has the shape of a checksummed key (<prefix>_<random>_<6 base58 characters>) but its checksum does not match: it could never verify'

/** Characters after the prefix that `start` keeps, as for generated keys. */
const START_CHARS = 4

/** A key to import as migrations.createKeys gives it: its plaintext, or its hash, or both. */
export interface GivenKey {
  plaintext?: string | undefined
  hash?: { value: string } | undefined
  start?: string | undefined
  prefix?: string | undefined
}

/**
 * The hash and display start of a key given in plaintext or by its hash, or what is wrong with it (reported once the
 * root key's rights are checked, rather than by the schema: a root key without the right to import learns that
 * first, 403). `at` names the key in messages.
 */
export function importedMaterial(key: GivenKey, at: string): KeyMaterial | ApiError {
  if (key.plaintext === undefined && key.hash === undefined) return invalid(at, 'give either plaintext or hash')
  // Verifiers refuse such a key before looking it up (shared/keys/key-checksum.ts): stored, it would never verify.
  if (key.plaintext !== undefined && failsChecksum(key.plaintext)) return invalid(`${at}.plaintext`, CHECKSUM_MISMATCH)
  const problem = key.hash && importedHashProblem(key.hash.value, `${at}.hash.value`)
  if (problem) return problem
  const hash = key.plaintext === undefined ? key.hash!.value : hashKey(key.plaintext)
  // Unkey takes the plaintext when both are sent; a hash that disagrees with it is a mistake worth naming.
  if (key.hash !== undefined && key.hash.value !== hash) return invalid(`${at}.hash`, 'is not the hash of plaintext')
  return { hash, start: key.start ?? startOf(key.plaintext, key.prefix) }
}

/**
 * What is wrong with a hash to import, if anything: it must be one Keygate can verify against, SHA-256 in standard
 * base64 (checked after the root key's rights, as importedMaterial's problems are). `at` names the field.
 */
export function importedHashProblem(value: string, at: string): ApiError | undefined {
  if (SHA256_BASE64.test(value)) return undefined
  return invalid(at, 'must be a SHA-256 in standard base64 (44 characters), as Unkey stores it')
}

function startOf(plaintext: string | undefined, prefix: string | undefined): string {
  if (plaintext === undefined) return ''
  const head = prefix !== undefined && plaintext.startsWith(`${prefix}_`) ? `${prefix}_` : ''
  // Never the whole of a short key: at most half of what follows the prefix.
  const shown = Math.min(START_CHARS, Math.floor((plaintext.length - head.length) / 2))
  return plaintext.slice(0, head.length + shown)
}
