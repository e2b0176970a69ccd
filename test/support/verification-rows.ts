import type { AnalyticsEngine } from '../../control-plane/analytics/engine/analytics-engine.js'
import type { VerdictCode } from '../../shared/verification/verification.js'

/** Per row: the api, the key, the identity's externalId (or ''), the outcome, how many, and credits spent each. */
export type VerificationRows = [string, string, string, VerdictCode, number, number?][]

/**
 * Inserts verifications into the engine's raw table as the ingest inserts them (its rollups follow), at `time`: for
 * each row, `n` verifications of a key answered `outcome`. `unique` names each request and the batch, never twice.
 */
export async function insertVerifications(
  engine: Pick<AnalyticsEngine, 'insert'>,
  time: number,
  rows: VerificationRows,
  unique: (prefix: string) => string,
): Promise<void> {
  const lines = rows.flatMap(([apiId, keyId, externalId, outcome, n, credits]) =>
    Array.from({ length: n }, () => ({
      request_id: unique('req'),
      time,
      workspace_id: 'ws_keygate',
      key_space_id: apiId,
      identity_id: '',
      external_id: externalId,
      key_id: keyId,
      outcome,
      tags: [],
      source: 'v1.verifyKey',
      region: 'test',
      spent_credits: credits ?? 0,
      latency: 0.1,
    })),
  )
  await engine.insert('key_verifications_v1', lines, unique('batch'))
}
