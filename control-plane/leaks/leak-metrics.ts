import { Counter, Gauge, type Registry } from 'prom-client'
import type { LeakVerdict } from './leak-verdict.js'

/**
 * Why a leak report was refused before any of its tokens was looked at. `busy`: too many bodies were being read at
 * once; `slow`: its body did not arrive in time.
 */
export type ReportRefusal = 'unsigned' | 'unknown_key' | 'busy' | 'slow' | 'bad_signature' | 'replay' | 'malformed'

/** What leak reports did (on the control plane's /metrics). */
export interface LeakMetrics {
  /** One token of a report, by who reported it, its label and (true positives) the action taken. */
  token(reporter: 'github' | 'rootkey', verdict: LeakVerdict): void
  refused(reason: ReportRefusal): void
  /** GitHub reports whose body is being read, before their signature can be checked. */
  reading(reports: number): void
}

export function createLeakMetrics(registry: Registry): LeakMetrics {
  const tokens = new Counter({
    name: 'keygate_leak_reports_total',
    help: 'Tokens reported leaked, by reporter (github, rootkey), label (true_positive, false_positive) and action taken',
    labelNames: ['reporter', 'label', 'action'],
    registers: [registry],
  })
  const refusals = new Counter({
    name: 'keygate_leak_report_refusals_total',
    help: 'Leak reports refused before acting, by reason (unsigned, unknown_key, busy, slow, bad_signature, replay, malformed)',
    labelNames: ['reason'],
    registers: [registry],
  })
  const reading = new Gauge({
    name: 'keygate_leak_report_reads_in_flight',
    help: 'GitHub leak reports whose body is being read, before their signature can be checked (past the limit: 429)',
    registers: [registry],
  })
  return {
    token: (reporter, verdict) =>
      tokens.inc({
        reporter,
        label: verdict.label,
        action: verdict.label === 'true_positive' ? verdict.action : 'none',
      }),
    refused: (reason) => refusals.inc({ reason }),
    reading: (reports) => reading.set(reports),
  }
}
