import { randomBytes } from 'node:crypto'
import { CHANGE_LOG_MAX_LEN, type ChangeEvent, type ChangeKind } from '../../change-event.js'
import {
  CREDIT_NOTICES_MAX_LEN,
  creditNoticeKinds,
  type CreditNotice,
  type CreditNoticeEntry,
} from '../../keys/credit-notice.js'
import { wallMicros } from '../../clock.js'
import type { MemoryChangeFeed } from '../../feed/memory-change-feed.js'
import { SHARD_COUNT } from '../../shards.js'
import { LOG_TRIMMED, type ChangeLogStore, type RevisionSnapshot, type ShardRevision } from './change-log-store.js'

/**
 * The shards' revisions and logs in process memory. The memory writes of keys and entities append here (`append`) in
 * the same synchronous step as their record, as the Redis write script does.
 */
export class MemoryChangeLogStore implements ChangeLogStore {
  private readonly revisions: number[] = new Array<number>(SHARD_COUNT).fill(0)
  private readonly logs: ChangeEvent[][] = Array.from({ length: SHARD_COUNT }, () => [])
  private readonly notices: CreditNoticeEntry[][] = Array.from({ length: SHARD_COUNT }, () => [])
  /** Notice ids sort as stream ids do: time, then a sequence number, never going back. */
  private noticeMs = 0
  private noticeSequence = 0
  /** Memory is lost only with the process, and every verifier with it: one epoch for its lifetime. */
  private readonly epoch = randomBytes(9).toString('base64url')

  constructor(
    private readonly feed: MemoryChangeFeed,
    private readonly changeLogMaxLen = CHANGE_LOG_MAX_LEN,
  ) {}

  /**
   * The next revision of the shard, appended to its log (with the fields an update changed) and published; the caller
   * stores the record with it.
   */
  append(shard: number, kind: ChangeKind, id: string, hash: string, apiId: string, fields: string[] = []): ChangeEvent {
    const rev = (this.revisions[shard] = (this.revisions[shard] ?? 0) + 1)
    const event: ChangeEvent = { v: 1, shard, epoch: this.epoch, rev, kind, keyId: id, hash, apiId }
    const log = this.logs[shard]!
    log.push(fields.length > 0 ? { ...event, fields: [...fields] } : event)
    if (log.length > this.changeLogMaxLen) log.splice(0, log.length - this.changeLogMaxLen)
    this.feed.publish({ ...event, at: wallMicros() })
    return { ...event }
  }

  async readRevisions(): Promise<RevisionSnapshot> {
    return { instance: this.epoch, shards: this.revisions.map((rev) => ({ rev, epoch: rev === 0 ? '' : this.epoch })) }
  }

  async readRevision(shard: number): Promise<ShardRevision> {
    const rev = this.revisions[shard] ?? 0
    return { rev, epoch: rev === 0 ? '' : this.epoch }
  }

  async readChanges(shard: number, afterRev: number, limit: number): Promise<ChangeEvent[] | typeof LOG_TRIMMED> {
    const log = this.logs[shard] ?? []
    const oldest = log[0]?.rev ?? (this.revisions[shard] ?? 0) + 1
    if (afterRev + 1 < oldest) return LOG_TRIMMED
    const changes = log
      .filter((event) => event.rev > afterRev)
      .slice(0, limit)
      .map((event) => ({ ...event, ...(event.fields ? { fields: [...event.fields] } : {}) }))
    return changes.length > 0 && changes[0]!.rev !== afterRev + 1 ? LOG_TRIMMED : changes
  }

  /**
   * Logs the notices a balance going from `before` to `after` makes, in the same synchronous step as the balance, and
   * publishes the hint that it did.
   */
  noteCredits(shard: number, notice: CreditNotice, before: number, after: number): void {
    const kinds = creditNoticeKinds(before, after, notice.lowThreshold)
    for (const kind of kinds) {
      const now = Date.now()
      this.noticeSequence = now > this.noticeMs ? 0 : this.noticeSequence + 1
      this.noticeMs = Math.max(this.noticeMs, now)
      const log = this.notices[shard]!
      log.push({
        id: `${this.noticeMs}-${this.noticeSequence}`,
        kind,
        keyId: notice.keyId,
        apiId: notice.apiId,
        remaining: after,
        ...(kind === 'low' ? { threshold: notice.lowThreshold! } : {}),
      })
      if (log.length > CREDIT_NOTICES_MAX_LEN) log.splice(0, log.length - CREDIT_NOTICES_MAX_LEN)
    }
    if (kinds.length > 0) this.feed.publishCreditNotice(shard)
  }

  async readCreditNotices(
    shard: number,
    afterId: string,
    limit: number,
  ): Promise<CreditNoticeEntry[] | typeof LOG_TRIMMED> {
    const log = this.notices[shard] ?? []
    if (afterId === '') return log.slice(0, limit).map((entry) => ({ ...entry }))
    const at = log.findIndex((entry) => entry.id === afterId)
    // The notice it names is gone: trimmed, unless nothing after it was ever logged (then it is the last one, kept).
    if (at === -1) return log.length > 0 && compareIds(log[0]!.id, afterId) > 0 ? LOG_TRIMMED : []
    return log.slice(at + 1, at + 1 + limit).map((entry) => ({ ...entry }))
  }

  async lastCreditNoticeIds(): Promise<string[]> {
    return this.notices.map((log) => log.at(-1)?.id ?? '')
  }
}

/** Orders `<ms>-<seq>` ids. */
function compareIds(a: string, b: string): number {
  const [aMs, aSeq] = a.split('-').map(Number) as [number, number]
  const [bMs, bSeq] = b.split('-').map(Number) as [number, number]
  return aMs - bMs || aSeq - bSeq
}
