import { describe, expect, it } from 'vitest'
import { pino } from 'pino'
import type { UsageIncrement } from '../../shared/analytics.js'
import type { KeyStore } from '../../shared/store/key-store.js'
import { UsageRecorder } from '../../verifier/usage-recorder.js'

describe('UsageRecorder', () => {
  it('batches counts per key and hour, and never sends a failed batch twice', async () => {
    const sent: UsageIncrement[][] = []
    let failing = true
    const store = {
      addUsage: async (batch: UsageIncrement[]) => {
        sent.push(batch)
        if (failing) throw new Error('partly written')
      },
    } as unknown as KeyStore
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), 1_000)
    const t = Date.UTC(2031, 0, 1, 10, 15)
    recorder.record('key_a', 'VALID', t)
    recorder.record('key_a', 'VALID', t + 60_000)
    recorder.record('key_a', 'RATE_LIMITED', t)
    recorder.record('key_b', 'DISABLED', t) // not an analytics outcome
    recorder.record(undefined, 'NOT_FOUND', t)
    await recorder.flush()
    expect(sent).toHaveLength(1)
    expect(sent[0]).toEqual([
      { keyId: 'key_a', granularity: 'hour', time: Date.UTC(2031, 0, 1, 10), counts: { success: 2, rateLimited: 1 } },
      { keyId: 'key_a', granularity: 'day', time: Date.UTC(2031, 0, 1), counts: { success: 2, rateLimited: 1 } },
    ])
    failing = false
    await recorder.flush()
    expect(sent).toHaveLength(1)
    recorder.record('key_a', 'USAGE_EXCEEDED', t)
    await recorder.flush()
    expect(sent[1]![0]!.counts).toEqual({ usageExceeded: 1 })
  })
})
