import type { EntityStore } from '../../shared/store/entities/entity-store.js'
import {
  USAGE_THRESHOLD_INDEX,
  usageSubjectMember,
  type UsageSubject,
  type UsageThreshold,
} from '../../shared/usage-threshold.js'

/** The subject's thresholds as its record holds them now (undefined: none, or no record). */
export type CurrentThresholds = () => Promise<readonly UsageThreshold[] | undefined>

/**
 * Keeps USAGE_THRESHOLD_INDEX — the identities and keys holding usage thresholds, all the usage alerts read — true to
 * their records around a write that sets or clears thresholds. As every pointer, it is written before the record that
 * needs it and removed after the record no longer does; and after either write it is checked against the record again:
 * of two writes racing, one setting and one clearing, whichever lands last decides, and the index follows it.
 */
export class UsageThresholdIndex {
  constructor(private readonly entities: Pick<EntityStore, 'addToIndex' | 'removeFromIndex'>) {}

  /** Before a write that sets `thresholds` (undefined: leaves them as they are) on `subject`. */
  async beforeWrite(subject: UsageSubject, thresholds: readonly UsageThreshold[] | undefined): Promise<void> {
    if (thresholds !== undefined && thresholds.length > 0)
      await this.entities.addToIndex(USAGE_THRESHOLD_INDEX, usageSubjectMember(subject))
  }

  /**
   * After a write that set thresholds on `subject`: listed again if the record, read again by `current`, holds some. A
   * clear that landed before this write may have unlisted it after beforeWrite, having read its record too early to
   * find this write's thresholds.
   */
  async afterSetting(subject: UsageSubject, current: CurrentThresholds): Promise<void> {
    if (((await current()) ?? []).length > 0)
      await this.entities.addToIndex(USAGE_THRESHOLD_INDEX, usageSubjectMember(subject))
  }

  /**
   * After a write that left `subject` without thresholds (cleared them, or deleted it): unlisted, unless the record,
   * read again by `current`, holds some by then.
   */
  async afterClearing(subject: UsageSubject, current: CurrentThresholds): Promise<void> {
    const member = usageSubjectMember(subject)
    await this.entities.removeFromIndex(USAGE_THRESHOLD_INDEX, member)
    if (((await current()) ?? []).length > 0) await this.entities.addToIndex(USAGE_THRESHOLD_INDEX, member)
  }
}
