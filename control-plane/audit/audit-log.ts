import type { Logger } from 'pino'
import type { Clock } from '../../shared/clock.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import type { AuditStore } from '../../shared/store/audit/audit-store.js'
import type { Caller } from '../caller.js'

/** Who made a write: the root key of a management call (and the request), or the command line. */
export interface AuditActor {
  rootKeyId: string
  requestId?: string
  /** A portal session's call: the session, and (as rootKeyId) the root key that minted it. */
  portalSession?: { id: string; portalId: string; externalId: string }
}

/** The actor of `keygate root-key …` commands, which need no root key: whoever can reach Redis runs them. */
export const CLI_ACTOR: AuditActor = { rootKeyId: 'cli' }

/** The actor of a management call: its root key, and its request. */
export const actorOf = (caller: Caller): AuditActor => ({
  rootKeyId: caller.principal.rootKeyId,
  requestId: caller.requestId,
})

export interface AuditTarget {
  apiId?: string
  keyId?: string
  before?: KeyRecord | Record<string, unknown> | null
  after?: KeyRecord | Record<string, unknown> | null
  /** What the call said beyond the record (AuditEntry.context). */
  context?: Record<string, unknown>
}

/**
 * Records every management write. The entry is appended after the write succeeded, in its own step: the
 * log lives in one slot and the records in others, so the two cannot be one atomic write. A failed append
 * is logged (never the secrets, which entries do not hold) and does not fail the request.
 */
export class AuditLog {
  constructor(
    private readonly store: Pick<AuditStore, 'appendAudit'>,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** A key record as entries show it, never its hash: the keys domain's view (auditedKey), which sits above. */
    private readonly showKey: (record: KeyRecord) => Record<string, unknown>,
  ) {}

  /** An entry for a write made by a management call. */
  async record(caller: Caller, action: string, target: AuditTarget): Promise<void> {
    await this.append(actorOf(caller), action, target)
  }

  /** An entry for a write made by `actor`: a management call, or a `keygate root-key` command (CLI_ACTOR). */
  async append(actor: AuditActor, action: string, target: AuditTarget): Promise<void> {
    const entry = {
      at: this.clock.now(),
      rootKeyId: actor.rootKeyId,
      action,
      apiId: target.apiId,
      keyId: target.keyId,
      before: this.shown(target.before),
      after: this.shown(target.after),
      ...(target.context !== undefined ? { context: target.context } : {}),
      requestId: actor.requestId,
      ...(actor.portalSession ? { portalSession: actor.portalSession } : {}),
    }
    try {
      await this.store.appendAudit(entry)
    } catch (err) {
      this.log.error({ err, action, keyId: target.keyId, apiId: target.apiId }, 'audit entry could not be written')
    }
  }

  /** Key records as the API shows them (showKey); anything else as given. */
  private shown(value: KeyRecord | Record<string, unknown> | null | undefined): Record<string, unknown> | undefined {
    if (!value) return undefined
    return 'hash' in value && 'start' in value ? this.showKey(value as KeyRecord) : value
  }
}
