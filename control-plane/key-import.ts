import { ApiError, badRequest, notFound } from '../shared/errors.js'
import { hashKey } from '../shared/key-material.js'
import type { NewKeyRecord } from '../shared/records.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import type { KeyWrites } from './key-writes.js'
import { SHA256_BASE64 } from './schemas/migration-schemas.js'
import { newKeyGrants, newKeyRecord, type KeyMaterial } from './new-key-record.js'
import type { Principal } from './root-key-auth.js'
import type { ImportedKey } from './schemas/migration-schemas.js'

/** Characters after the prefix that `start` keeps, as for generated keys. */
const START_CHARS = 4

/** The hash and display start of a key given in plaintext or by its hash. `at` names it in messages. */
export function importedMaterial(key: ImportedKey, at: string): KeyMaterial {
  if (key.plaintext === undefined && key.hash === undefined) throw badRequest(`${at}: give either plaintext or hash`)
  // Checked here rather than by the schema: a root key without the right to import learns that first (403).
  if (key.hash !== undefined && !SHA256_BASE64.test(key.hash.value)) {
    throw badRequest(`${at}.hash.value: must be a SHA-256 in standard base64 (44 characters), as Unkey stores it`)
  }
  const hash = key.plaintext === undefined ? key.hash!.value : hashKey(key.plaintext)
  // Unkey takes the plaintext when both are sent; a hash that disagrees with it is a mistake worth naming.
  if (key.hash !== undefined && key.hash.value !== hash) throw badRequest(`${at}.hash: is not the hash of plaintext`)
  return { hash, start: key.start ?? startOf(key.plaintext, key.prefix) }
}

function startOf(plaintext: string | undefined, prefix: string | undefined): string {
  if (plaintext === undefined) return ''
  const head = prefix !== undefined && plaintext.startsWith(`${prefix}_`) ? `${prefix}_` : ''
  // Never the whole of a short key: at most half of what follows the prefix.
  const shown = Math.min(START_CHARS, Math.floor((plaintext.length - head.length) / 2))
  return plaintext.slice(0, head.length + shown)
}

/**
 * Imports keys all or nothing, as far as a store without multi-key transactions allows. Everything is checked
 * before anything is written: fields, apis, and duplicates (a hash twice in the request, or already stored) are
 * reported together and nothing is written. Then the keys are written one by one; if a write fails (another
 * writer stored the same hash meanwhile, the api was deleted, the store went away), the keys this call wrote are
 * deleted again before the error is answered. Only a crash of this process between the two can leave some of
 * them written; sending the same request again then answers 409 naming them.
 */
export async function importKeys(
  deps: ControlPlaneDeps,
  writes: KeyWrites,
  keys: readonly ImportedKey[],
  principal: Principal,
): Promise<NewKeyRecord[]> {
  const now = deps.clock.now()
  const material = keys.map((key, i) => importedMaterial(key, String(i)))
  const checked = keys.map((key, i) => newKeyRecord(key, material[i]!, now))
  for (const apiId of new Set(checked.map((record) => record.apiId))) {
    if (!(await deps.store.getApi(apiId))) throw notFound(`api ${apiId} not found`)
  }
  await refuseDuplicates(deps, checked)
  // Only now are the permissions and roles they name resolved (and created when missing and allowed).
  const records: NewKeyRecord[] = []
  for (const [i, key] of keys.entries()) {
    records.push(newKeyRecord(key, material[i]!, now, await newKeyGrants(key, deps.rbac, principal)))
  }
  const written: NewKeyRecord[] = []
  try {
    for (const record of records) {
      await writes.createKey(record)
      written.push(record)
    }
  } catch (err) {
    const undone = await Promise.allSettled(written.map((record) => writes.deleteKey(record.id)))
    const left = written.filter((_, i) => undone[i]!.status === 'rejected').map((record) => record.id)
    if (left.length > 0) deps.log.error({ keyIds: left }, 'key import failed part-way; these keys stay written')
    throw err
  }
  return written
}

async function refuseDuplicates(deps: ControlPlaneDeps, records: readonly NewKeyRecord[]): Promise<void> {
  const firstIndex = new Map<string, number>()
  const problems: string[] = []
  for (const [i, record] of records.entries()) {
    const first = firstIndex.get(record.hash)
    if (first !== undefined) problems.push(`${i}: is the same key as ${first}`)
    else firstIndex.set(record.hash, i)
  }
  const stored = await Promise.all(records.map((record) => deps.store.getKeyByHash(record.hash)))
  // Which key holds the hash is not said: it may belong to an api the caller cannot read.
  for (const [i, found] of stored.entries()) if (found) problems.push(`${i}: a key with this hash exists already`)
  if (problems.length > 0) throw new ApiError('CONFLICT', `nothing imported; ${problems.join('; ')}`)
}
