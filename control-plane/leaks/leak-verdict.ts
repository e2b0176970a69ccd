import type { LeakPolicy } from '../../shared/leak.js'

/** A report's answer: no key of ours (false positive), or which key it is and what was done. */
export type LeakVerdict =
  { label: 'false_positive' } | { label: 'true_positive'; keyId: string; apiId: string; action: LeakPolicy }
