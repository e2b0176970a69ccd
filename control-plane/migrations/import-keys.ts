import { ApiError, notFound } from '../../shared/errors/errors.js'
import type { NewKeyRecord } from '../../shared/keys/records.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { bindIdentity, checkIdentityBinding } from '../keys/key-references.js'
import { checkedNewKey, type KeyMaterial, type NewKey } from '../keys/key-fields.js'
import { newId } from '../../shared/ids.js'
import { sortedGrants, type GrantPlan } from '../permissions/rbac.js'
import { requirePermission, type Principal } from '../root-keys/root-key-auth.js'

/** A key that exists elsewhere: the fields keys.createKey takes, and what identifies it at rest. */
export interface KeyToImport {
  fields: NewKey
  /** Its hash and start, or what is wrong with the key as given: reported as a problem of this key's fields. */
  material: KeyMaterial | ApiError
}

/**
 * What becomes of a key whose hash is taken (stored already, an earlier key's of the call, or stored by another
 * writer meanwhile): `refuse-call` refuses the call, 409 naming each such key, and leaves nothing written (v1's
 * migrations.createKeys); `skip-key` leaves the key out, null in its place, and writes the others (v2's migrateKeys).
 */
export type TakenHashes = 'refuse-call' | 'skip-key'

/**
 * Where the apis are looked up and the right to give keys their externalIds' identities is checked, around the check
 * of the keys' fields (the right to create keys on each api is checked before all three): `rights-first` checks the
 * identities' rights, every key's material (its plaintext or hash), the fields, then the apis (v1); `api-first` the
 * apis, each key's material then its fields, then the identities' (v2).
 */
export type ImportCheckOrder = 'rights-first' | 'api-first'

export interface ImportKeysInput {
  keys: readonly KeyToImport[]
  takenHashes: TakenHashes
  checkOrder: ImportCheckOrder
  /** The action of the keys' audit entries: the operation as the caller named it. */
  auditAction: 'migrations.createKeys' | 'keys.migrateKeys'
  /** The caller's name for the migration, kept in each key's audit entry. */
  migrationId?: string | undefined
}

/** The right importKeys needs, checked before its input is: `create_key` on each api the keys go to. */
export function authorizeImportKeys(caller: Caller, apiIds: Iterable<string>): void {
  for (const apiId of new Set(apiIds)) requirePermission(caller.principal, apiId, 'create_key')
}

/** A problem with the key at `index` in the call, answered as `error` is: a wire may locate it in its list. */
export class ImportedKeyError extends ApiError {
  constructor(
    readonly index: number,
    readonly error: ApiError,
  ) {
    super(error.code, error.message, error.headers, error.details)
  }
}

/**
 * Imports keys that exist elsewhere, by their hash, without reissuing them, once authorizeImportKeys has passed;
 * answers each key's record in the order given, or null for one left out (`skip-key`). Everything is checked before
 * anything is written: the identities' rights, the keys' fields and their apis (in `checkOrder`'s order), the
 * taken hashes, then the permissions and roles the keys name (created when missing and allowed). The keys are then
 * written one by one; any failure but a taken hash deletes what the call wrote before it is answered, so the answer
 * is every key's outcome or an error with nothing stored (bar a crash between the two). As keys.createKey, every
 * externalId imported gets its identity (Unkey's upsert).
 */
export async function importKeys(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: ImportKeysInput,
): Promise<(NewKeyRecord | null)[]> {
  const { principal } = caller
  const { keys } = input
  if (input.checkOrder === 'rights-first') {
    await checkIdentityBindings(deps, principal, keys)
    for (const { material } of keys) if (material instanceof ApiError) throw material
  }
  if (input.checkOrder === 'api-first') await requireApis(deps, keys)
  const now = deps.clock.now()
  const checked = keys.map((key, i) => checkedRecord(key, i, now))
  if (input.checkOrder === 'rights-first') await requireApis(deps, keys)
  else await checkIdentityBindings(deps, principal, keys)

  const taken = await takenHashes(deps, checked)
  if (input.takenHashes === 'refuse-call' && taken.length > 0) {
    throw new ApiError('CONFLICT', `nothing imported; ${taken.map(({ i, problem }) => `${i}: ${problem}`).join('; ')}`)
  }
  const takenAt = new Set(taken.map(({ i }) => i))
  // Every key's names are checked (404, 403) before any key's are created: a call refused for its last key's role
  // leaves no permission its first key named behind.
  const plans: (GrantPlan | null)[] = []
  for (const [i, { fields }] of keys.entries())
    plans.push(takenAt.has(i) ? null : await deps.rbac.planGrants(fields, principal, true))
  const records: (NewKeyRecord | null)[] = []
  for (const [i, plan] of plans.entries()) {
    records.push(plan ? { ...checked[i]!, ...sortedGrants(await deps.rbac.makeGrants(plan, principal)) } : null)
  }
  const toWrite = records.filter((record) => record !== null)
  const written = await writeImported(deps, toWrite, input.takenHashes === 'skip-key')
  await bindIdentities(deps, caller, written)
  caller.log.info(
    { keys: written.length, skipped: keys.length - written.length, rootKeyId: principal.rootKeyId },
    'keys imported',
  )
  const context = input.migrationId === undefined ? undefined : { migrationId: input.migrationId }
  for (const record of written) {
    await deps.audit.record(caller, input.auditAction, {
      apiId: record.apiId,
      keyId: record.id,
      after: record,
      context,
    })
  }
  const stored = new Set(written)
  return records.map((record) => (record && stored.has(record) ? record : null))
}

/** The right to give the keys their externalIds' identities. */
async function checkIdentityBindings(deps: ControlPlaneDeps, principal: Principal, keys: readonly KeyToImport[]) {
  for (const externalId of new Set(keys.flatMap((key) => key.fields.externalId ?? [])))
    await checkIdentityBinding(deps, principal, externalId)
}

async function requireApis(deps: ControlPlaneDeps, keys: readonly KeyToImport[]) {
  for (const apiId of new Set(keys.map((key) => key.fields.apiId))) {
    if (!(await deps.store.keys.getApi(apiId))) throw notFound('api', `api ${apiId} not found`)
  }
}

/** The key's record, made once (its grants are added later): a problem with it names the key (ImportedKeyError). */
function checkedRecord(key: KeyToImport, index: number, now: number): NewKeyRecord {
  try {
    if (key.material instanceof ApiError) throw key.material
    return { id: newId('key', now), ...key.material, ...checkedNewKey(key.fields, now) }
  } catch (err) {
    throw err instanceof ApiError ? new ImportedKeyError(index, err) : err
  }
}

/**
 * The keys that cannot be stored and why, in the order v1 names them: each hash an earlier key of the call has,
 * then each already stored. Which key holds a stored hash is not said: it may belong to an api the caller cannot
 * read.
 */
async function takenHashes(
  deps: ControlPlaneDeps,
  records: readonly NewKeyRecord[],
): Promise<{ i: number; problem: string }[]> {
  const firstIndex = new Map<string, number>()
  const problems: { i: number; problem: string }[] = []
  for (const [i, { hash }] of records.entries()) {
    const first = firstIndex.get(hash)
    if (first !== undefined) problems.push({ i, problem: `is the same key as ${first}` })
    else firstIndex.set(hash, i)
  }
  const stored = await Promise.all(records.map(({ hash }) => deps.store.keys.getKeyByHash(hash)))
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
  records: readonly NewKeyRecord[],
  skipTaken: boolean,
): Promise<NewKeyRecord[]> {
  const written: NewKeyRecord[] = []
  try {
    for (const record of records) {
      try {
        await deps.writes.createKey(record)
        written.push(record)
      } catch (err) {
        // KeyWrites.createKey's one CONFLICT: the hash is taken, and nothing was written.
        if (!(skipTaken && err instanceof ApiError && err.code === 'CONFLICT')) throw err
      }
    }
  } catch (err) {
    const undone = await Promise.allSettled(written.map((record) => deps.writes.deleteKey(record.id)))
    const left = written.filter((_, i) => undone[i]!.status === 'rejected').map((record) => record.id)
    if (left.length > 0) deps.log.error({ keyIds: left }, 'key import failed part-way; these keys stay written')
    throw err
  }
  return written
}

/**
 * Gives every written key its externalId's identity, made when missing. An identity made by another call since the
 * check is bound only if the root key may read it; refused, the keys the call wrote go.
 */
async function bindIdentities(deps: ControlPlaneDeps, caller: Caller, written: readonly NewKeyRecord[]) {
  try {
    for (const externalId of new Set(written.flatMap((record) => (record.ownerId ? [record.ownerId] : []))))
      await bindIdentity(deps, caller, externalId)
  } catch (err) {
    for (const record of written) await deps.writes.deleteKey(record.id).catch(() => {})
    throw err
  }
}
