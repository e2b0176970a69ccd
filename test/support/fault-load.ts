import { jsonPoster } from './processes.js'

/** Where the load goes, and the bound it is held to. */
export interface FaultLoadTarget {
  controlPlane: string
  verifier: string
  rootKey: string
  /** The revocation bound (MAX_STALENESS_MS) the processes run with. */
  boundMs: number
}

/** What the load saw while it ran. */
export interface FaultLoadReport {
  /** Verification answers by HTTP status, and the slowest answer's time in ms. */
  statuses: Map<number, number>
  slowestMs: number
  /** Verification answers by status and code (VALID, DISABLED, …). */
  codes: Map<string, number>
  /** Valid answers for a key asked more than the bound after its disable was acknowledged. */
  lateValid: number
  /** Management answers other than 200 and 503 ("retry"): status and body. */
  unexpectedWrites: string[]
  /** /readyz samples (every 100 ms) that were not 200, and the longest run of them in a row, in ms. */
  notReady: number
  longestNotReadyMs: number
  /** Ids of keys whose create, and of keys whose disable, was acknowledged. */
  created: string[]
  disabled: string[]
}

/** Load under way: stop() ends it and reports. */
export interface FaultLoad {
  stop(): Promise<FaultLoadReport>
  /** Every acknowledged create reads back, every acknowledged disable reads back disabled: the keys that do not. */
  lostWrites(): Promise<string[]>
}

/**
 * The load the fault tests put on a control plane and a verifier while Redis misbehaves: verify loops on the verifier
 * over keys of one api, a writer that disables one of them and creates two more every three steps (50 ms apart), and
 * a readiness sampler. Creates the api and its first keys before it starts.
 */
export async function startFaultLoad(
  target: FaultLoadTarget,
  { keys: keyCount = 60, verifyLoops = 3 }: { keys?: number; verifyLoops?: number } = {},
): Promise<FaultLoad> {
  const post = jsonPoster(target.rootKey)
  const { body: api } = await post(target.controlPlane, 'apis.createApi', { name: 'fault load' })
  const keys: { keyId: string; key: string }[] = []
  for (let i = 0; i < keyCount; i++) {
    const made = await post(target.controlPlane, 'keys.createKey', { apiId: api.apiId })
    if (made.status !== 200) throw new Error(`creating the load's keys: ${made.status} ${JSON.stringify(made.body)}`)
    keys.push(made.body as { keyId: string; key: string })
  }
  const report: FaultLoadReport = {
    statuses: new Map(),
    slowestMs: 0,
    codes: new Map(),
    lateValid: 0,
    unexpectedWrites: [],
    notReady: 0,
    longestNotReadyMs: 0,
    created: [],
    disabled: [],
  }
  const disabledAt = new Map<string, number>()
  let running = true
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  const verifyLoop = async () => {
    while (running) {
      const key = keys[Math.floor(Math.random() * keys.length)]!
      const sentAt = Date.now()
      const answer = await post(target.verifier, 'keys.verifyKey', { key: key.key }, false)
      report.statuses.set(answer.status, (report.statuses.get(answer.status) ?? 0) + 1)
      report.slowestMs = Math.max(report.slowestMs, Date.now() - sentAt)
      const code = `${answer.status} ${String(answer.body?.code ?? answer.body?.error?.code)}`
      report.codes.set(code, (report.codes.get(code) ?? 0) + 1)
      const disabled = disabledAt.get(key.keyId)
      if (answer.body?.valid === true && disabled !== undefined && sentAt - disabled > target.boundMs)
        report.lateValid++
    }
  }
  const written = (answer: { status: number; body: unknown }) => {
    if (answer.status !== 200 && answer.status !== 503)
      report.unexpectedWrites.push(`${answer.status} ${JSON.stringify(answer.body)}`)
    return answer.status === 200
  }
  /** Keys not disabled yet (as far as anything acknowledged says). */
  const enabled = [...keys]
  const writeLoop = async () => {
    for (let i = 0; running; i++) {
      if (i % 3 === 0) {
        const at = Math.floor(Math.random() * enabled.length)
        const victim = enabled[at]!
        const answer = await post(target.controlPlane, 'keys.updateKey', { keyId: victim.keyId, enabled: false })
        if (written(answer)) {
          disabledAt.set(victim.keyId, Date.now())
          report.disabled.push(victim.keyId)
          enabled.splice(at, 1)
        }
      } else {
        const answer = await post(target.controlPlane, 'keys.createKey', { apiId: api.apiId })
        if (written(answer)) {
          const made = answer.body as { keyId: string; key: string }
          report.created.push(made.keyId)
          // Verified too, and disabled in turn: the load runs for as long as it is asked to.
          keys.push(made)
          enabled.push(made)
        }
      }
      await pause(50)
    }
  }
  const readyLoop = async () => {
    let since: number | undefined
    while (running) {
      const sampledAt = Date.now()
      const ready = await fetch(`${target.verifier}/readyz`).then(
        (response) => response.status === 200,
        () => false,
      )
      if (ready) since = undefined
      else {
        report.notReady++
        since ??= sampledAt
        report.longestNotReadyMs = Math.max(report.longestNotReadyMs, Date.now() - since)
      }
      await pause(100)
    }
  }
  const loops = [...Array.from({ length: verifyLoops }, verifyLoop), writeLoop(), readyLoop()]

  return {
    async stop() {
      running = false
      await Promise.all(loops)
      return report
    },
    async lostWrites() {
      const lost: string[] = []
      const read = async (keyId: string) => {
        // Just after a fault a read may still meet a 503 ("retry"); what must never come is a 404 or a wrong state.
        for (let attempt = 0; ; attempt++) {
          const response = await fetch(`${target.controlPlane}/v1/keys.getKey?keyId=${keyId}`, {
            headers: { authorization: `Bearer ${target.rootKey}` },
          })
          if (response.status !== 503 || attempt === 50) return response
          await pause(100)
        }
      }
      for (const keyId of report.created) {
        const response = await read(keyId)
        if (response.status !== 200) lost.push(`created ${keyId}: ${response.status}`)
      }
      for (const keyId of report.disabled) {
        const response = await read(keyId)
        const body = (await response.json().catch(() => ({}))) as { enabled?: boolean }
        if (response.status !== 200 || body.enabled !== false) lost.push(`disabled ${keyId}: ${response.status}`)
      }
      return lost
    },
  }
}
