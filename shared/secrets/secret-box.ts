import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

/** A key secrets are sealed with: 32 random bytes, named so that a sealed value says which key opens it. */
export interface SealingKey {
  id: string
  key: Buffer
}

/** Why a sealed value did not open: a key no longer configured, or a value damaged or moved to another record. */
export class SecretBoxError extends Error {
  constructor(readonly reason: 'unknown-key' | 'damaged') {
    super(
      reason === 'unknown-key'
        ? 'the secret was sealed with a key that is not configured (ENCRYPTION_KEYS)'
        : 'the secret does not open: damaged, or sealed for another record',
    )
    this.name = 'SecretBoxError'
  }
}

const FORMAT = 'kgs1'
const IV_BYTES = 12
const TAG_BYTES = 16
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/

/**
 * Seals secrets kept at rest (a billing provider's API key) with AES-256-GCM under keys from configuration: the store
 * holds `kgs1.<key id>.<iv>.<ciphertext and tag>`, never the secret. The first key seals; every key opens, so a key is
 * rotated by putting the new one first and keeping the old one until every value was sealed again. Each value is
 * bound to a `context` (the record it belongs to) as associated data: copied onto another record, it does not open.
 */
export class SecretBox {
  private readonly byId: ReadonlyMap<string, Buffer>

  constructor(private readonly keys: readonly SealingKey[]) {
    if (keys.length === 0) throw new Error('a secret box needs a key')
    for (const { id, key } of keys) {
      if (!KEY_ID.test(id)) throw new Error('a sealing key id is 1–32 letters, digits, - or _')
      if (key.length !== 32) throw new Error(`the sealing key ${id} is not 32 bytes`)
    }
    this.byId = new Map(keys.map(({ id, key }) => [id, key]))
    if (this.byId.size !== keys.length) throw new Error('two sealing keys have the same id')
  }

  /** `plain` sealed for `context`, under the first key. */
  seal(plain: string, context: string): string {
    const { id, key } = this.keys[0]!
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', key, iv)
    cipher.setAAD(associated(id, context))
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()])
    return [FORMAT, id, iv.toString('base64url'), sealed.toString('base64url')].join('.')
  }

  /** The secret `sealed` holds, if it was sealed for `context` under a configured key; a SecretBoxError if not. */
  open(sealed: string, context: string): string {
    const [format, id, iv, body, ...rest] = sealed.split('.')
    if (format !== FORMAT || id === undefined || iv === undefined || body === undefined || rest.length > 0)
      throw new SecretBoxError('damaged')
    const key = this.byId.get(id)
    if (key === undefined) throw new SecretBoxError('unknown-key')
    const ivBytes = Buffer.from(iv, 'base64url')
    const bytes = Buffer.from(body, 'base64url')
    if (ivBytes.length !== IV_BYTES || bytes.length < TAG_BYTES) throw new SecretBoxError('damaged')
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, ivBytes)
      decipher.setAAD(associated(id, context))
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString(
        'utf8',
      )
    } catch {
      throw new SecretBoxError('damaged')
    }
  }

  /** Whether `sealed` is sealed under a key other than the first: to seal again after a rotation. */
  sealedWithOlderKey(sealed: string): boolean {
    return sealed.split('.')[1] !== this.keys[0]!.id
  }
}

const associated = (keyId: string, context: string) => Buffer.from(`${FORMAT}.${keyId}.${context}`, 'utf8')

/**
 * ENCRYPTION_KEYS as configured: comma-separated `<id>:<32 bytes, base64>`, the first sealing. Problems are said
 * without the value (it is a secret).
 */
export function parseSealingKeys(raw: string): SealingKey[] | string {
  const keys: SealingKey[] = []
  for (const [i, entry] of raw.split(',').entries()) {
    const colon = entry.indexOf(':')
    const id = entry.slice(0, colon).trim()
    if (colon < 0 || !KEY_ID.test(id))
      return `entry ${i + 1} is not <id>:<key> with an id of 1–32 letters, digits, - or _`
    const key = Buffer.from(entry.slice(colon + 1).trim(), 'base64')
    if (key.length !== 32) return `the key ${id} is not 32 bytes in base64 (make one with: openssl rand -base64 32)`
    if (keys.some((known) => known.id === id)) return `the id ${id} is given twice`
    keys.push({ id, key })
  }
  return keys
}
