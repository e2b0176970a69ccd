import { jsonPoster } from './processes.js'
import { readyAgainAfter, readyAfter, type ReadinessSample } from './readiness-timeline.js'
import { waitFor } from './wait-for.js'

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
  /** Verification answers by HTTP status (0: no answer), and the slowest answer's time in ms. */
  statuses: Map<number, number>
  slowestMs: number
  /** Verification answers by status and code (VALID, DISABLED, …). */
  codes: Map<string, number>
  /** Valid answers for a key asked more than the bound after its disable was acknowledged. */
  lateValid: number
  /** The longest a valid answer's key had been disabled (acknowledged) when it was asked, in ms; undefined: never. */
  latestValidMs: number | undefined
  /** Keys answered NOT_FOUND: every key verified was acknowledged, so a Redis without it answered. */
  notFound: string[]
  /** Management answers by write and status, e.g. "create 503". */
  writes: Map<string, number>
  /** Management answers other than 200 and 503 ("retry"): status and body. */
  unexpectedWrites: string[]
  /** /readyz samples (every 100 ms) that were not 200, and the longest run of them in a row, in ms. */
  notReady: number
  longestNotReadyMs: number
  /** Ids of keys whose create, and of keys whose disable, was acknowledged. */
  created: string[]
  disabled: string[]
}

/** Load under way: stop() ends it and reports. Times are Date.now() milliseconds. */
export interface FaultLoad {
  /** The api the load's keys belong to. */
  apiId: string
  /** What the load has seen so far; stop() returns it complete. */
  report: FaultLoadReport
  stop(): Promise<FaultLoadReport>
  /**
   * Every acknowledged create reads back (the keys made before the load too), every acknowledged disable reads back
   * disabled: the keys that do not.
   */
  lostWrites(): Promise<string[]>
  /** When the first write sent after `t` was acknowledged; undefined: none yet. */
  firstAcknowledgedAfter(t: number): number | undefined
  /**
   * Resolves once the writer has had `count` more answers, whatever they were: load "for a while" counted in the
   * load's own steps (50 ms apart at the least), which a slow machine takes longer to make rather than fewer of.
   */
  wrote(count: number): Promise<void>
  /** Whether a verification sent after `t` has been answered. */
  verifiedAfter(t: number): boolean
  /** When the first /readyz sample after `t` answered 200; undefined: none yet. */
  readyAfter(t: number): number | undefined
  /** How long after `t` the verifier was ready for good (see readiness-timeline.ts), in ms. */
  readyAgainAfter(t: number): number
}

/**
 * The load the fault tests put on a control plane and a verifier while Redis misbehaves: `verifyLoops` verify loops on
 * the verifier over keys of one api, a writer whose every `disableEvery`th step disables one of them and whose other
 * steps create one more (steps 50 ms apart), and a readiness sampler. Creates the api and its first `keys` keys before
 * it starts.
 */
export async function startFaultLoad(
  target: FaultLoadTarget,
  {
    keys: keyCount = 60,
    verifyLoops = 3,
    disableEvery = 3,
  }: { keys?: number; verifyLoops?: number; disableEvery?: number } = {},
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
    latestValidMs: undefined,
    notFound: [],
    writes: new Map(),
    unexpectedWrites: [],
    notReady: 0,
    longestNotReadyMs: 0,
    created: [],
    disabled: [],
  }
  const count = <K>(counts: Map<K, number>, key: K) => counts.set(key, (counts.get(key) ?? 0) + 1)
  const disabledAt = new Map<string, number>()
  /** When each acknowledged write was sent, and when its acknowledgement came, in that order. */
  const acknowledged: { sentAt: number; at: number }[] = []
  const readiness: ReadinessSample[] = []
  let writesAnswered = 0
  let lastVerificationSentAt = 0
  let running = true
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  const verifyLoop = async () => {
    while (running) {
      const key = keys[Math.floor(Math.random() * keys.length)]!
      const sentAt = Date.now()
      const answer = await post(target.verifier, 'keys.verifyKey', { key: key.key }, false)
      lastVerificationSentAt = Math.max(lastVerificationSentAt, sentAt)
      count(report.statuses, answer.status)
      report.slowestMs = Math.max(report.slowestMs, Date.now() - sentAt)
      count(report.codes, `${answer.status} ${String(answer.body?.code ?? answer.body?.error?.code)}`)
      const disabled = disabledAt.get(key.keyId)
      if (answer.body?.valid === true && disabled !== undefined && sentAt > disabled) {
        report.latestValidMs = Math.max(report.latestValidMs ?? 0, sentAt - disabled)
        if (sentAt - disabled > target.boundMs) report.lateValid++
      }
      if (answer.body?.code === 'NOT_FOUND' && !report.notFound.includes(key.keyId)) report.notFound.push(key.keyId)
    }
  }
  /** Sends a write and judges its answer: the answer when acknowledged. A 503 ("retry") has an unknown outcome. */
  const write = async (what: 'create' | 'disable', path: string, body: unknown) => {
    const sentAt = Date.now()
    const answer = await post(target.controlPlane, path, body)
    writesAnswered++
    count(report.writes, `${what} ${answer.status}`)
    if (answer.status !== 200 && answer.status !== 503)
      report.unexpectedWrites.push(`${answer.status} ${JSON.stringify(answer.body)}`)
    if (answer.status !== 200) return undefined
    acknowledged.push({ sentAt, at: Date.now() })
    return answer
  }
  /** Keys not disabled yet (as far as anything acknowledged says). */
  const enabled = [...keys]
  const writeLoop = async () => {
    for (let i = 0; running; i++) {
      if (i % disableEvery === 0) {
        const at = Math.floor(Math.random() * enabled.length)
        const victim = enabled[at]
        // While creates fail, acknowledged disables may use every key up for a while.
        if (victim && (await write('disable', 'keys.updateKey', { keyId: victim.keyId, enabled: false }))) {
          disabledAt.set(victim.keyId, Date.now())
          report.disabled.push(victim.keyId)
          enabled.splice(at, 1)
        }
      } else {
        const answer = await write('create', 'keys.createKey', { apiId: api.apiId })
        if (answer) {
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
      readiness.push({ at: Date.now(), ready })
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
    apiId: api.apiId as string,
    report,
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
      // The keys made before the load, then every acknowledged create, in that order.
      for (const { keyId } of [...keys]) {
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
    async wrote(count) {
      const until = writesAnswered + count
      await waitFor(() => writesAnswered >= until, `${count} more answers to the load's writes`, 30_000, 20)
    },
    verifiedAfter: (t) => lastVerificationSentAt > t,
    firstAcknowledgedAfter: (t) => acknowledged.find(({ sentAt }) => sentAt > t)?.at,
    readyAfter: (t) => readyAfter(readiness, t),
    readyAgainAfter: (t) => readyAgainAfter(readiness, t),
  }
}
