import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { jsonPoster, startKeygate } from '../support/processes.js'
import { startRedisCluster } from '../support/redis-cluster.js'
import { stopAfterAll } from '../support/stop-after-all.js'
import { waitFor } from '../support/wait-for.js'

const ROOT_KEY = 'reshard-test-root-key-0123456789'
const BOUND_MS = 2_000

/** Runs a redis-cli command to its end: its exit code and what it printed. */
function redisCli(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('redis-cli', args)
    let output = ''
    child.stdout.on('data', (chunk) => (output += String(chunk)))
    child.stderr.on('data', (chunk) => (output += String(chunk)))
    child.on('exit', (code) => resolve({ code, output }))
  })
}

/**
 * A third of the slots moved by `redis-cli --cluster reshard` while verifications, disables and creates run: MOVED and
 * ASK meet the processes mid-migration. No verification answers 500 (a redirection is retried, or a 503 at worst), no
 * disabled key verifies past the bound, every acknowledged create is there afterwards, and the verifier stays ready
 * but for a blip.
 */
describe('Redis Cluster: a reshard under load', () => {
  const stoppable = stopAfterAll()

  it('costs no 500, no late valid answer, no acknowledged write', async () => {
    const nodes = await startRedisCluster(stoppable.stopped)
    const env = {
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_CLUSTER_NODES: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
      KEYGATE_ROOT_KEY: ROOT_KEY,
      LOG_LEVEL: 'error',
      MAX_STALENESS_MS: String(BOUND_MS),
      POLL_INTERVAL_MS: '250',
    }
    const [controlPlane, verifier] = await Promise.all([
      stoppable.stopped(startKeygate(['control-plane'], env)),
      stoppable.stopped(startKeygate(['verifier'], env)),
    ])
    const post = jsonPoster(ROOT_KEY)
    const { body: api } = await post(controlPlane.url, 'apis.createApi', { name: 'reshard' })
    const keys: { keyId: string; key: string }[] = []
    for (let i = 0; i < 60; i++)
      keys.push(
        (await post(controlPlane.url, 'keys.createKey', { apiId: api.apiId })).body as { keyId: string; key: string },
      )

    const statuses = new Map<number, number>()
    const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1)
    const disabledAt = new Map<string, number>()
    const acknowledged: string[] = []
    let lateValid = 0
    let notReady = 0
    /** The longest run of not-ready samples in a row (100 ms apart). */
    let longestNotReady = 0
    let streak = 0
    let running = true
    const verifyLoop = async () => {
      while (running) {
        const key = keys[Math.floor(Math.random() * keys.length)]!
        const sentAt = Date.now()
        const answer = await post(verifier.url, 'keys.verifyKey', { key: key.key }, false)
        count(answer.status)
        const disabled = disabledAt.get(key.keyId)
        if (answer.body?.valid === true && disabled !== undefined && sentAt - disabled > BOUND_MS) lateValid++
      }
    }
    const writeLoop = async () => {
      for (let i = 0; running; i++) {
        const target = keys[i % keys.length]!
        if (i % 3 === 0 && !disabledAt.has(target.keyId)) {
          const answer = await post(controlPlane.url, 'keys.updateKey', { keyId: target.keyId, enabled: false })
          if (answer.status === 200) disabledAt.set(target.keyId, Date.now())
          else expect(answer.status, JSON.stringify(answer.body)).toBe(503)
        } else {
          const made = await post(controlPlane.url, 'keys.createKey', { apiId: api.apiId })
          if (made.status === 200) acknowledged.push(made.body.keyId)
          else expect(made.status, JSON.stringify(made.body)).toBe(503)
        }
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    const readyLoop = async () => {
      while (running) {
        if ((await fetch(`${verifier.url}/readyz`)).status !== 200) {
          notReady++
          longestNotReady = Math.max(longestNotReady, ++streak)
        } else streak = 0
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    const load = [verifyLoop(), verifyLoop(), verifyLoop(), writeLoop(), readyLoop()]

    const ids = await Promise.all(
      nodes.map(async (node) => ((await node.admin.call('CLUSTER', 'MYID')) as string).trim()),
    )
    const started = Date.now()
    const reshard = await redisCli([
      '--cluster',
      'reshard',
      `127.0.0.1:${nodes[0]!.port}`,
      '--cluster-from',
      ids[0]!,
      '--cluster-to',
      ids[1]!,
      '--cluster-slots',
      '5461',
      '--cluster-yes',
    ])
    expect(reshard.code, reshard.output.slice(-2_000)).toBe(0)
    console.log(`reshard: 5461 slots moved in ${Date.now() - started} ms under load`)
    // A little load after the move too: the clients learn the new owners.
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    running = false
    await Promise.all(load)

    console.log(
      `reshard: answers ${JSON.stringify(Object.fromEntries(statuses))}, not ready ${notReady} samples (${longestNotReady} in a row)`,
    )
    expect([...statuses.keys()].filter((status) => status >= 500 && status !== 503)).toEqual([])
    expect(lateValid).toBe(0)
    // At most a blip of readiness: never out of its Service for the bound's length (polls failing for over 2 s made
    // /readyz flap). Not-ready samples themselves vary with the machine's load (0–6 with the retry, 5 without it in our
    // runs), so it is the longest run that is held: 4 in a row at most so far.
    expect(longestNotReady * 100).toBeLessThan(BOUND_MS)
    await waitFor(async () => (await fetch(`${verifier.url}/readyz`)).status === 200, 'the verifier ready', 5_000)
    for (const keyId of acknowledged) {
      const read = await fetch(`${controlPlane.url}/v1/keys.getKey?keyId=${keyId}`, {
        headers: { authorization: `Bearer ${ROOT_KEY}` },
      })
      expect(read.status, keyId).toBe(200)
    }
    expect(acknowledged.length).toBeGreaterThan(0)
  }, 120_000)
})
