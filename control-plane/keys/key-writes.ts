import { ApiError, WriteConflictError, notFound } from '../../shared/errors/errors.js'
import type { KeyPatch, KeyRecord, NewKeyRecord } from '../../shared/keys/records.js'
import type { KeyWrite } from '../../shared/store/api-keys/api-key-store.js'
import type { ManagementStore } from '../../shared/store/management-store.js'
import type { Clock } from '../../shared/clock.js'
import type { Logger } from 'pino'
import type { WriteListener } from '../write-listener.js'

// A compare-and-set update is retried this many times against concurrent writers before a 409.
const UPDATE_ATTEMPTS = 5

/** What deleting an api's keys needs of its settings (ApiSettingsRecords, in the apis domain, which sits above). */
export interface ApiSettingsDeletion {
  delete(apiId: string): Promise<void>
}

/** Writes that take more than one store call, and their crash and race rules. */
export class KeyWrites {
  constructor(
    private readonly deps: { store: ManagementStore; clock: Clock; log: Logger },
    private readonly onWrite: WriteListener,
    private readonly apiSettings: ApiSettingsDeletion,
  ) {}

  async createKey(record: NewKeyRecord): Promise<KeyWrite> {
    const { store } = this.deps
    const write = await store.keys.createKey(record)
    // Two random 16+ byte keys never collide; an imported hash could. Either way: nothing was written.
    if (write === false) throw new ApiError('CONFLICT', 'a key with the same hash already exists')
    this.written(write)
    // deleteApi marks the api before it deletes its keys: if that happened while we wrote, undo our key,
    // so that no key of a deleted api is left verifying.
    if ((await store.keys.apiExistsOrDeleting(record.apiId)) !== 'exists') {
      await this.deleteKey(record.id)
      throw notFound('api', `api ${record.apiId} not found`)
    }
    return write
  }

  /**
   * Applies the patch on the freshest record, retrying when another write got there first. `allowed` checks
   * the caller may (it throws otherwise); a patch given as a function is computed from the record it applies to.
   */
  async updateKey(
    keyId: string,
    patch: KeyPatch | ((current: KeyRecord) => KeyPatch),
    allowed: (record: KeyRecord) => void | Promise<void>,
  ): Promise<KeyWrite> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.deps.store.keys.getKeyById(keyId)
      if (!current) throw notFound('key', `key ${keyId} not found`)
      await allowed(current)
      try {
        const changes = typeof patch === 'function' ? patch(current) : patch
        const write = await this.deps.store.keys.updateKey(keyId, changes, current.rev, this.deps.clock.now())
        if (!write) throw notFound('key', `key ${keyId} not found`)
        this.written(write)
        return write
      } catch (err) {
        if (!(err instanceof WriteConflictError) || attempt === UPDATE_ATTEMPTS) throw err
      }
    }
  }

  async readKey(keyId: string): Promise<KeyRecord> {
    const record = await this.deps.store.keys.getKeyById(keyId)
    if (!record) throw notFound('key', `key ${keyId} not found`)
    return record
  }

  async deleteKey(keyId: string): Promise<KeyWrite | null> {
    const write = await this.deps.store.keys.deleteKey(keyId)
    if (write) this.written(write)
    return write
  }

  /**
   * Deletes every key of the api, then its settings (which its keys verified under until then), then the api. A retry
   * after a crash finishes the job.
   */
  async deleteApi(apiId: string): Promise<void> {
    const { store } = this.deps
    if (!(await store.keys.markApiDeleting(apiId))) throw notFound('api', `api ${apiId} not found`)
    await this.deleteAllKeys(apiId)
    await this.apiSettings.delete(apiId)
    await store.keys.removeApi(apiId)
    this.deps.log.info({ apiId }, 'api deleted')
  }

  /** Deletes every key of the api page by page (each delete is its own atomic write); returns how many. */
  async deleteAllKeys(apiId: string): Promise<number> {
    let cursor: string | undefined
    let deleted = 0
    for (;;) {
      const page = await this.deps.store.keys.listKeys(apiId, { cursor, limit: 100 })
      const writes = await Promise.all(page.keys.map((key) => this.deleteKey(key.id)))
      deleted += writes.filter(Boolean).length
      if (!page.cursor) return deleted
      cursor = page.cursor
    }
  }

  /** Every successful write passes here: local read-your-writes, and a warning if it was not published. */
  private written(write: KeyWrite): void {
    this.onWrite(write)
    if (write.publishFailed) {
      this.deps.log.warn(
        { keyId: write.event.keyId, shard: write.event.shard, rev: write.event.rev },
        'change logged but not published; verifiers repair from the log',
      )
    }
  }
}
