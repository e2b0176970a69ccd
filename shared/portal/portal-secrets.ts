import { randomBytes } from 'node:crypto'
import bs58 from 'bs58'
import { hashKey } from '../keys/key-material.js'

/** A new one-time code (`pst_…`) or access token (`pat_…`), 32 random bytes, and the SHA-256 that is all we keep. */
export function newPortalSecret(prefix: 'pst' | 'pat'): { secret: string; hash: string } {
  const secret = `${prefix}_${bs58.encode(randomBytes(32))}`
  return { secret, hash: hashKey(secret) }
}
