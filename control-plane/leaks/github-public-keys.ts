import { createPublicKey, type KeyObject } from 'node:crypto'
import type { Logger } from 'pino'
import { request } from 'undici'
import type { Clock } from '../../shared/clock.js'

/** GitHub's secret-scanning signing keys, where GitHub publishes them (SECRET_SCANNING_KEYS_URL's default). */
export const GITHUB_SECRET_SCANNING_KEYS_URL = 'https://api.github.com/meta/public_keys/secret_scanning'

/** The public keys that sign leak reports, by their identifier. */
export interface ReportSigningKeys {
  /** The key named `identifier`; null: no such key (even after asking the publisher again, when that is allowed). */
  keyFor(identifier: string): Promise<KeyObject | null>
}

export interface PublicKeysOptions {
  url: string
  clock: Clock
  log: Pick<Logger, 'warn'>
  /** An unknown identifier makes a fetch at most this often: unsigned noise cannot make us hammer the publisher. */
  refetchAfterMs?: number
  /** Keys fetched longer ago than this are fetched again on their next use, so that a key withdrawn is dropped. */
  maxAgeMs?: number
  timeoutMs?: number
}

// A key set is a few PEM keys: anything much larger is not one.
const MAX_BODY_BYTES = 256 * 1024

/**
 * The signing keys published at a URL as GitHub publishes them (`{public_keys: [{key_identifier, key}]}`, PEM),
 * fetched on first use and cached. An identifier not in the cache makes one fetch (at most every `refetchAfterMs`),
 * and waits for a fetch under way, whoever started it: GitHub names a new key before it signs with it. Only P-256 EC
 * keys are kept, since reports are signed with ECDSA P-256. A failed fetch throws, and so does every identifier not
 * held until the next fetch may be tried (the report is answered 503 and GitHub sends it again, rather than a 401
 * that says the key is not GitHub's); a failed refresh of keys past their age keeps the keys held, and says so.
 */
export class PublishedSigningKeys implements ReportSigningKeys {
  private keys = new Map<string, KeyObject>()
  private fetchedAt = Number.NEGATIVE_INFINITY
  private triedAt = Number.NEGATIVE_INFINITY
  private pending: Promise<void> | undefined
  /** Why the latest fetch failed; undefined once one succeeds. */
  private failure: Error | undefined
  private readonly refetchAfterMs: number
  private readonly maxAgeMs: number
  private readonly timeoutMs: number

  constructor(private readonly options: PublicKeysOptions) {
    this.refetchAfterMs = options.refetchAfterMs ?? 60_000
    this.maxAgeMs = options.maxAgeMs ?? 86_400_000
    this.timeoutMs = options.timeoutMs ?? 5_000
  }

  async keyFor(identifier: string): Promise<KeyObject | null> {
    const now = this.options.clock.now()
    const known = this.keys.get(identifier)
    if (known !== undefined) {
      if (now - this.fetchedAt > this.maxAgeMs && now - this.triedAt >= this.refetchAfterMs) {
        await this.refresh().catch((err: unknown) =>
          this.options.log.warn({ err, url: this.options.url }, 'secret-scanning keys could not be refreshed'),
        )
        return this.keys.get(identifier) ?? null
      }
      return known
    }
    if (this.pending === undefined && now - this.triedAt < this.refetchAfterMs) {
      if (this.failure)
        throw new Error('the key set could not be fetched, and is not asked again yet', { cause: this.failure })
      return null
    }
    await this.refresh()
    return this.keys.get(identifier) ?? null
  }

  private refresh(): Promise<void> {
    this.pending ??= this.fetchKeys()
      .then(() => (this.failure = undefined))
      .catch((err: unknown) => {
        this.failure = err instanceof Error ? err : new Error(String(err))
        throw err
      })
      .finally(() => (this.pending = undefined))
    return this.pending
  }

  private async fetchKeys(): Promise<void> {
    this.triedAt = this.options.clock.now()
    // undici's request follows no redirect: the key set is read from where it was configured, or not at all.
    const answer = await request(this.options.url, {
      headers: { accept: 'application/json', 'user-agent': 'keygate-secret-scanning' },
      signal: AbortSignal.timeout(this.timeoutMs),
    })
    const text = await readLimited(answer.body)
    if (answer.statusCode !== 200) throw new Error(`the key set answered ${answer.statusCode}`)
    this.keys = parseKeySet(JSON.parse(text) as unknown)
    this.fetchedAt = this.options.clock.now()
  }
}

async function readLimited(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    size += chunk.length
    if (size > MAX_BODY_BYTES) throw new Error(`the key set is larger than ${MAX_BODY_BYTES} bytes`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** The P-256 keys of a published key set, by identifier; entries that are not one are skipped. */
export function parseKeySet(published: unknown): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>()
  const entries = (published as { public_keys?: unknown } | null)?.public_keys
  if (!Array.isArray(entries)) throw new Error('the key set has no public_keys list')
  for (const entry of entries as unknown[]) {
    const { key_identifier: id, key: pem } = (entry ?? {}) as { key_identifier?: unknown; key?: unknown }
    if (typeof id !== 'string' || typeof pem !== 'string') continue
    try {
      const key = createPublicKey(pem)
      if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') keys.set(id, key)
    } catch {
      // Not a key: skipped, as the others still sign.
    }
  }
  return keys
}
