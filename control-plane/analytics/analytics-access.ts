import type { AnalyticsEngine } from './engine/analytics-engine.js'

/**
 * Whether this control plane answers analytics queries, and on which engine: none without an engine, nor with an
 * embedded one another control plane ingests for (its numbers would not be the ones that one holds).
 */
export interface AnalyticsAccess {
  engine(): AnalyticsEngine | undefined
  /** Why there is none, as the caller is told (412). */
  why(): string
}

export const NO_ANALYTICS: AnalyticsAccess = {
  engine: () => undefined,
  why: () => 'Analytics are not configured for this instance',
}
