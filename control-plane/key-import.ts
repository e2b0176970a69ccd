import { ApiError, invalid, notFound } from '../shared/errors.js'
import { hashKey } from '../shared/key-material.js'
import type { NewKeyRecord } from '../shared/records.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import type { KeyWrites } from './key-writes.js'
import { SHA256_BASE64 } from './schemas/migration-schemas.js'
import { newKeyGrants, newKeyRecord, type KeyMaterial } from './new-key-record.js'
import type { Principal } from './root-key-auth.js'
import type { ImportedKey } from './schemas/migration-schemas.js'
import type { NewKeyFields } from './schemas/key-schemas.js'

/** Characters after the prefix that `start` keeps, as for generated keys. */
const START_CHARS = 4

/** The hash and display start of a key given in plaintext or by its hash. `at` names it in messages. */
export function importedMaterial(key: ImportedKey, at: string): KeyMaterial {
  if (key.plaintext === undefined && key.hash === undefined) throw invalid(at, 'give either plaintext or hash')
  // Checked here rather than by the schema: a root key without the right to import learns that first (403).
  if (key.hash !== undefined) checkImportedHash(key.hash.value, `${at}.hash.value`)
  const hash = key.plaintext === undefined ? key.hash!.value : hashKey(key.plaintext)
  // Unkey takes the plaintext when both are sent; a hash that disagrees with it is a mistake worth naming.
  if (key.hash !== undefined && key.hash.value !== hash) throw invalid(`${at}.hash`, 'is not the hash of plaintext')
  return { hash, start: key.start ?? startOf(key.plaintext, key.prefix) }
}

/** A hash to import must be one Keygate can verify against: SHA-256 in standard base64. `at` names the field. */
export function checkImportedHash(value: string, at: string): void {
  if (!SHA256_BASE64.test(value)) {
    throw invalid(at, 'must be a SHA-256 in standard base64 (44 characters), as Unkey stores it')
  }
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
    if (!(await deps.store.keys.getApi(apiId))) throw notFound('api', `api ${apiId} not found`)
  }
  const problems = await takenHashes(deps, material)
  if (problems.length > 0) {
    throw new ApiError(
      'CONFLICT',
      `nothing imported; ${problems.map(({ i, problem }) => `${i}: ${problem}`).join('; ')}`,
    )
  }
  // Only now are the permissions and roles they name resolved (and created when missing and allowed): every key's
  // checked first, so that a refusal for a later key leaves nothing an earlier one named.
  for (const key of keys) await deps.rbac.checkNames(key, principal, true)
  const records: NewKeyRecord[] = []
  for (const [i, key] of keys.entries()) {
    records.push(newKeyRecord(key, material[i]!, now, await newKeyGrants(key, deps.rbac, principal)))
  }
  return writeImported(deps, writes, records, false)
}

/** A key to import whose fields newKeyRecord has accepted. */
export interface ImportItem {
  fields: NewKeyFields
  material: KeyMaterial
}

/**
 * Imports keys each on its own, as v2's keys.migrateKeys reports them: a key whose hash is taken (stored before,
 * by an earlier key of the same call, or by another writer meanwhile) is not written, and answers null in its
 * place; every other key is written, and answers its record. The caller has checked the fields and the api. The
 * permissions and roles named are resolved (created when missing and allowed) only for the keys to be written,
 * before anything is written; any failure but a taken hash deletes what this call wrote before it is thrown, so
 * the answer is either every key's outcome or an error with nothing stored (bar a crash between the two).
 */
export async function importEach(
  deps: ControlPlaneDeps,
  writes: KeyWrites,
  items: readonly ImportItem[],
  principal: Principal,
): Promise<(NewKeyRecord | null)[]> {
  const now = deps.clock.now()
  const material = items.map((item) => item.material)
  const taken = new Set((await takenHashes(deps, material)).map(({ i }) => i))
  // Every key's names are checked (404, 403) before any key's are created: a call refused for its last key's role
  // leaves no permission its first key named behind.
  for (const [i, { fields }] of items.entries()) if (!taken.has(i)) await deps.rbac.checkNames(fields, principal, true)
  const records: (NewKeyRecord | null)[] = []
  for (const [i, { fields }] of items.entries()) {
    if (taken.has(i)) records.push(null)
    else records.push(newKeyRecord(fields, material[i]!, now, await newKeyGrants(fields, deps.rbac, principal)))
  }
  const toWrite = records.filter((record) => record !== null)
  const stored = new Set(await writeImported(deps, writes, toWrite, true))
  return records.map((record) => (record && stored.has(record) ? record : null))
}

/**
 * The keys that cannot be stored and why, in the order v1 names them: each hash an earlier key of the call has,
 * then each already stored. Which key holds a stored hash is not said: it may belong to an api the caller cannot
 * read.
 */
async function takenHashes(
  deps: ControlPlaneDeps,
  material: readonly KeyMaterial[],
): Promise<{ i: number; problem: string }[]> {
  const firstIndex = new Map<string, number>()
  const problems: { i: number; problem: string }[] = []
  for (const [i, { hash }] of material.entries()) {
    const first = firstIndex.get(hash)
    if (first !== undefined) problems.push({ i, problem: `is the same key as ${first}` })
    else firstIndex.set(hash, i)
  }
  const stored = await Promise.all(material.map(({ hash }) => deps.store.keys.getKeyByHash(hash)))
  for (const [i, found] of stored.entries())
    if (found) problems.push({ i, problem: 'a key with this hash exists already' })
  return problems
}

/**
 * Writes the records one by one, and answers those written. With `skipTaken`, a record whose hash another writer
 * stored meanwhile is left out (nothing of it was stored); any other failure (and, without `skipTaken`, that one
 * too) deletes the keys this call wrote before it is thrown.
 */
async function writeImported(
  deps: ControlPlaneDeps,
  writes: KeyWrites,
  records: readonly NewKeyRecord[],
  skipTaken: boolean,
): Promise<NewKeyRecord[]> {
  const written: NewKeyRecord[] = []
  try {
    for (const record of records) {
      try {
        await writes.createKey(record)
        written.push(record)
      } catch (err) {
        // KeyWrites.createKey's one CONFLICT: the hash is taken, and nothing was written.
        if (!(skipTaken && err instanceof ApiError && err.code === 'CONFLICT')) throw err
      }
    }
  } catch (err) {
    const undone = await Promise.allSettled(written.map((record) => writes.deleteKey(record.id)))
    const left = written.filter((_, i) => undone[i]!.status === 'rejected').map((record) => record.id)
    if (left.length > 0) deps.log.error({ keyIds: left }, 'key import failed part-way; these keys stay written')
    throw err
  }
  return written
}
