import { verify, type KeyObject } from 'node:crypto'

// One base64 value and nothing else: Buffer.from skips what is not base64 (spaces, the ", " Node joins a repeated
// header with) and stops at padding, so that a value with anything around a signature would pass for it.
const ONE_BASE64_VALUE = /^[A-Za-z0-9+/]+={0,2}$/

/**
 * Whether `signature` (base64 of an ASN.1 DER ECDSA signature, as GitHub sends it) signs `body` — the raw bytes as
 * they arrived, never a re-serialisation — with `key`, over SHA-256. A malformed signature, or anything beside it, is
 * no signature.
 */
export function signs(key: KeyObject, body: Buffer, signature: string): boolean {
  if (!ONE_BASE64_VALUE.test(signature)) return false
  const bytes = Buffer.from(signature, 'base64')
  try {
    return verify('sha256', body, { key, dsaEncoding: 'der' }, bytes)
  } catch {
    return false
  }
}
