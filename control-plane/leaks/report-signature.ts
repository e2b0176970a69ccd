import { verify, type KeyObject } from 'node:crypto'

/**
 * Whether `signature` (base64 of an ASN.1 DER ECDSA signature, as GitHub sends it) signs `body` — the raw bytes as
 * they arrived, never a re-serialisation — with `key`, over SHA-256. A malformed signature is no signature.
 */
export function signs(key: KeyObject, body: Buffer, signature: string): boolean {
  const bytes = Buffer.from(signature, 'base64')
  if (bytes.length === 0) return false
  try {
    return verify('sha256', body, { key, dsaEncoding: 'der' }, bytes)
  } catch {
    return false
  }
}
