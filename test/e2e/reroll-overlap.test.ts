import { describe, expect, it } from 'vitest'
import { keygateStack } from '../support/keygate-stack.js'
import { jsonPoster } from '../support/processes.js'
import { useRedisServer } from '../support/redis-server.js'

const ROOT_KEY = 'reroll-overlap-root-key-0123456789'
const MAX_STALENESS_MS = 2_000
/** The old key's grace period. */
const GRACE_MS = 3_000
const post = jsonPoster(ROOT_KEY)
const redis = useRedisServer()
const startStack = keygateStack()

/**
 * Rotation with overlap, on real processes: rerollKey's old key verifies on every verifier until its grace deadline,
 * never after it, and the new key verifies throughout.
 */
describe('rerollKey with a grace period, on a control plane and two verifiers', () => {
  it('keeps the old key valid until the deadline on every verifier, refuses it after, and the new one throughout', async () => {
    const { controlPlane, verifiers } = await startStack({
      redisUrl: redis.url,
      rootKey: ROOT_KEY,
      maxStalenessMs: MAX_STALENESS_MS,
      verifiers: [{}, {}],
    })
    const { body: api } = await post(controlPlane.url, 'apis.createApi', { name: 'rotation' })
    const { body: old } = await post(controlPlane.url, 'keys.createKey', { apiId: api.apiId })
    for (const verifier of verifiers)
      expect((await post(verifier.url, 'keys.verifyKey', { key: old.key }, false)).body.valid).toBe(true)

    const sentAt = Date.now()
    const rerolled = await post(controlPlane.url, 'keys.rerollKey', { keyId: old.keyId, expiration: GRACE_MS })
    expect(rerolled.status).toBe(200)
    const answeredAt = Date.now()
    // The deadline is the control plane's clock during the call + the grace period: between these two.
    const earliest = sentAt + GRACE_MS
    const deadline = answeredAt + GRACE_MS
    const fresh = rerolled.body as { keyId: string; key: string }

    // Both keys verify on both verifiers, every 50 ms, until just before the deadline; then the old one only until it.
    const answers: { verifier: number; key: 'old' | 'new'; at: number; answered: number; code: string }[] = []
    const ask = async (verifier: number, key: 'old' | 'new') => {
      const at = Date.now()
      const verifierUrl = verifiers[verifier]!.url
      const { body } = await post(verifierUrl, 'keys.verifyKey', { key: key === 'old' ? old.key : fresh.key }, false)
      answers.push({ verifier, key, at, answered: Date.now(), code: body.code })
    }
    while (Date.now() < deadline + MAX_STALENESS_MS + 500) {
      await Promise.all([ask(0, 'old'), ask(1, 'old'), ask(0, 'new'), ask(1, 'new')])
      await new Promise((resolve) => setTimeout(resolve, 50))
    }

    // Answered before the earliest the deadline can be, the old key is valid everywhere.
    const early = answers.filter((a) => a.key === 'old' && a.answered < earliest)
    expect(early.length).toBeGreaterThan(10)
    expect(early.filter((a) => a.code !== 'VALID')).toEqual([])
    // After the deadline, never valid: each verifier judges expiry by its clock, inside the bound by construction.
    const late = answers.filter((a) => a.key === 'old' && a.at > deadline)
    expect(late.length).toBeGreaterThan(10)
    expect(late.filter((a) => a.code !== 'EXPIRED')).toEqual([])
    for (const verifier of [0, 1]) {
      const firstExpired = answers.find((a) => a.verifier === verifier && a.key === 'old' && a.code === 'EXPIRED')
      expect(firstExpired, `verifier ${verifier} refuses the old key`).toBeDefined()
      console.log(
        `reroll overlap: verifier ${verifier} refused the old key from ${firstExpired!.at - sentAt} ms after the reroll was sent (grace ${GRACE_MS} ms)`,
      )
    }
    // The new key verifies throughout, on both (the first asks may reach a verifier before the key's create event:
    // its miss path reads the store).
    expect(answers.filter((a) => a.key === 'new' && a.code !== 'VALID')).toEqual([])
  }, 30_000)
})
