import { readFileSync, writeFileSync, existsSync } from 'node:fs'
import { afterAll, expect, it } from 'vitest'
import { startKeygate, type KeygateProcess } from '../test/support/processes.js'
import { startRedisServer, type RedisServer } from '../test/support/redis-server.js'

/**
 * Bounded soak (SOAK_SECONDS, default 180): writes, verifications and disables against a control plane and two
 * verifiers, with Redis SIGKILLed and restarted from its AOF every 30 s. Checks the revocation bound on every
 * disable (no valid:true later than MAX_STALENESS_MS after the 200) and the verifiers' memory, and records the
 * result in bench/RESULTS.md.
 */
const SECONDS = Number(process.env.SOAK_SECONDS ?? 180)
const BOUND_MS = 2_000
const ROOT_KEY = 'soak-root-key-0123456789abcdef'
const AOF = ['--appendonly', 'yes', '--appendfsync', 'always']
const processes: { stop(): Promise<unknown> }[] = []
afterAll(async () => {
  await Promise.all(processes.reverse().map((p) => p.stop()))
})

const rssMb = (pid: number | undefined) => {
  const status = pid ? readFileSync(`/proc/${pid}/status`, 'utf8') : ''
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
}

async function post(base: string, path: string, body: unknown, auth = true) {
  const response = await fetch(`${base}/v1/${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${ROOT_KEY}` } : {}) }, body: JSON.stringify(body),
  }).catch(() => undefined)
  return response ? { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, any> } : { status: 0, body: {} }
}

it(`soaks for ${SECONDS} s`, async () => {
  let redis: RedisServer = await startRedisServer({ args: AOF })
  processes.push({ stop: () => redis.stop() })
  const env = { REDIS_URL: redis.url, KEYGATE_ROOT_KEY: ROOT_KEY, LOG_LEVEL: 'warn', MAX_STALENESS_MS: String(BOUND_MS), POLL_INTERVAL_MS: '250' }
  const controlPlane = await startKeygate(['control-plane'], env)
  const verifiers: KeygateProcess[] = [await startKeygate(['verifier'], env), await startKeygate(['verifier'], env)]
  processes.push(controlPlane, ...verifiers)
  const { body: api } = await post(controlPlane.url, 'apis.createApi', { name: 'soak' })

  const live: { keyId: string; key: string }[] = []
  const stats = { creates: 0, verifies: 0, disables: 0, worstDenyMs: 0, lateValid: 0, restarts: 0, errors503: 0 }
  const rss: number[][] = []
  const end = Date.now() + SECONDS * 1000
  let stopping = false

  const writer = async () => {
    while (!stopping) {
      const made = await post(controlPlane.url, 'keys.createKey', { apiId: api.apiId })
      if (made.status === 200) { live.push(made.body as { keyId: string; key: string }); stats.creates++ } else stats.errors503++
    }
  }
  const reader = async () => {
    while (!stopping) {
      const pick = live[Math.floor(Math.random() * live.length)]
      if (!pick) { await new Promise((r) => setTimeout(r, 10)); continue }
      await post(verifiers[stats.verifies % 2]!.url, 'keys.verifyKey', { key: pick.key }, false)
      stats.verifies++
    }
  }
  const disabler = async () => {
    while (!stopping) {
      const index = Math.floor(Math.random() * live.length)
      const target = live[index]
      if (!target) { await new Promise((r) => setTimeout(r, 20)); continue }
      const answer = await post(controlPlane.url, 'keys.updateKey', { keyId: target.keyId, enabled: false })
      if (answer.status !== 200) { await new Promise((r) => setTimeout(r, 50)); continue }
      live.splice(index, 1)
      stats.disables++
      const at = Date.now()
      for (const verifier of verifiers) {
        for (;;) {
          const verdict = await post(verifier.url, 'keys.verifyKey', { key: target.key }, false)
          const elapsed = Date.now() - at
          if (verdict.status === 200 && verdict.body.valid === true) {
            if (elapsed > BOUND_MS) stats.lateValid++
            await new Promise((r) => setTimeout(r, 5))
            continue
          }
          stats.worstDenyMs = Math.max(stats.worstDenyMs, elapsed)
          break
        }
      }
    }
  }
  const chaos = async () => {
    while (!stopping) {
      await new Promise((r) => setTimeout(r, 30_000))
      if (stopping) return
      const { port, dir } = redis
      await redis.stop({ keepDir: true })
      await new Promise((r) => setTimeout(r, 500))
      redis = await startRedisServer({ port, dir, args: AOF })
      stats.restarts++
    }
  }
  const sampler = async () => {
    while (!stopping) {
      rss.push(verifiers.map((v) => rssMb(v.child.pid)))
      await new Promise((r) => setTimeout(r, 5_000))
    }
  }
  const workers = [writer(), writer(), reader(), reader(), reader(), disabler(), chaos(), sampler()]
  while (Date.now() < end) await new Promise((r) => setTimeout(r, 1_000))
  stopping = true
  await Promise.all(workers)

  // RSS saw-tooths with garbage collection: compare the peaks of the two halves of the settled run.
  const settled = rss.slice(Math.floor(rss.length / 3))
  const half = Math.floor(settled.length / 2)
  const peak = (samples: number[][]) => [0, 1].map((i) => Math.max(0, ...samples.map((s) => s[i]!)))
  const first = peak(settled.slice(0, half))
  const last = peak(settled.slice(half))
  const line = `| ${new Date().toISOString().slice(0, 10)} | ${SECONDS} s | ${stats.creates} | ${stats.verifies} | ${stats.disables} | ${stats.restarts} | ${stats.worstDenyMs} ms | ${stats.lateValid} | ${first.map((m) => m.toFixed(0)).join('/')} → ${last.map((m) => m.toFixed(0)).join('/')} MB |`
  console.log(`soak: ${JSON.stringify(stats)} rss ${JSON.stringify(rss.map((r) => r.map((m) => Math.round(m))))}`)
  const results = new URL('./RESULTS.md', import.meta.url)
  const header = '| date | length | creates | verifies | disables | Redis restarts | worst disable→deny | valid past the bound | verifier peak RSS, 1st → 2nd half of the settled run |\n|---|---|---|---|---|---|---|---|---|\n'
  const text = existsSync(results) ? readFileSync(results, 'utf8') : ''
  const marker = '## Soak\n'
  const intro = `${marker}\n\`SOAK_SECONDS=${SECONDS} npm run soak\` (control plane + 2 verifiers on one Redis with AOF, SIGKILL + restart every 30 s, bound ${BOUND_MS} ms, poll 250 ms; 2-core dev machine):\n\n${header}`
  writeFileSync(results, text.includes(marker) ? `${text.trimEnd()}\n${line}\n` : `${text.trimEnd()}\n\n${intro}${line}\n`)

  expect(stats.lateValid).toBe(0)
  expect(stats.disables).toBeGreaterThan(10)
  expect(stats.restarts).toBeGreaterThanOrEqual(Math.floor(SECONDS / 30) - 1)
  // Memory is stable once warmed up: the second half's peak stays within 30% (+20 MB) of the first half's.
  last.forEach((mb, i) => expect(mb).toBeLessThan(first[i]! * 1.3 + 20))
})
