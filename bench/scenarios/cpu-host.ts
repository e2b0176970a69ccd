import { freePort } from '../../test/support/free-port.js'
import { BENCH_KEY_FIELDS, CEILING_KEY_ID } from '../lib/bench-key.js'
import { LOAD_CORE } from '../lib/cores.js'
import { CPU_CONNECTIONS, CPU_PIPELINING, keyedGetLoad, postLoad } from '../lib/cpu-loads.js'
import { runCpuRounds, windowsNote, CPU_ROUNDS, CPU_SECONDS, type CpuContender } from '../lib/cpu-rounds.js'
import { onStage } from '../lib/keygate-fixture.js'
import { benchServer, startKeygate, startServer, type BenchProcess } from '../lib/processes.js'
import { showMeasured } from '../lib/report.js'
import type { Check, ScenarioReport } from '../lib/scenario-report.js'
import type { Measured } from '../lib/stats.js'

const KEYS = 1_000
const VERIFY = '/v1/keys.verifyKey'
const GUEST = benchServer('guest')

/**
 * `npm run bench:cpu-host`: why bench:cpu's ratios are what they are. The baselines bench:cpu judges keygate
 * against (the Fastify ceiling, the bare undici proxy) run by CPU per request alone, as there, and as guests inside
 * an idle verifier process (bench/servers/guest.ts), beside keygate's own route in that same process. The first
 * ratio is what the verifier's process (its heap, its code, its background work) costs a server that runs in it;
 * the second is what keygate's own code costs against the baseline when both pay that.
 */
export async function cpuHost(): Promise<ScenarioReport> {
  return onStage(
    KEYS,
    async ({ fixture, apiId, keys, onStop }) => {
      const start = async (server: Promise<BenchProcess>) => {
        const started = await server
        onStop(() => started.stop())
        return started
      }
      const bodies = keys.map(({ key }) => JSON.stringify({ key }))
      const keyHeaders = keys.map(({ key }) => ({ 'x-api-key': key }))
      const upstream = await start(startServer({ args: [benchServer('upstream')], readyPath: '/', core: LOAD_CORE }))
      const host = async (guest: string) => {
        const [guestPort, proxyPort] = [await freePort(), await freePort()]
        const verifier = await start(
          startKeygate(
            ['verifier'],
            {
              ...fixture.env,
              GUEST: guest,
              GUEST_PORT: String(guestPort),
              UPSTREAM_URL: upstream.url,
              PROXY_PORT: String(proxyPort),
              AUTHORIZE_API_ID: apiId,
            },
            { nodeFlags: ['--import', GUEST] },
          ),
        )
        return { verifier, guestUrl: `http://127.0.0.1:${guestPort}`, proxyUrl: `http://127.0.0.1:${proxyPort}` }
      }
      const ceiling = await start(startServer({ args: [benchServer('ceiling')] }))
      const bareProxy = await start(
        startServer({ args: [benchServer('undici-proxy')], env: { UPSTREAM_URL: upstream.url } }),
      )
      const ceilingHost = await host('ceiling')
      const proxyHost = await host('undici-proxy')
      // Each URL must be the server its label says (a guest URL pointing at keygate would measure keygate twice).
      await checkAnswers(
        [
          { url: ceiling.url, keyId: CEILING_KEY_ID },
          { url: ceilingHost.guestUrl, keyId: CEILING_KEY_ID },
          { url: ceilingHost.verifier.url, keyId: keys[0]!.keyId },
        ],
        [
          { url: bareProxy.url, keyless: 200 },
          { url: proxyHost.guestUrl, keyless: 200 },
          { url: proxyHost.proxyUrl, keyless: 401 },
        ],
        bodies[0]!,
        keyHeaders[0]!,
      )

      const post = (url: string) => postLoad(url, VERIFY, bodies)
      const get = (url: string) => keyedGetLoad(url, '/', keyHeaders)
      const pid = (server: BenchProcess) => server.child.pid!
      const redis = fixture.redisPid
      const C = 'ceiling (Fastify route, constant verdict), alone'
      const CH = 'the same ceiling inside an idle verifier process'
      const K = 'keygate verifyKey (v1), cache hit, in that process'
      const B = 'bare undici pass-through proxy, alone'
      const BH = 'the same bare proxy inside an idle verifier process'
      const P = 'keygate reverse proxy, in that process'
      const inHost = (process: BenchProcess) => ({
        pids: [pid(process)],
        needs: [redis],
        readyUrl: `${process.url}/readyz`,
      })
      const contenders: CpuContender[] = [
        { label: C, pids: [pid(ceiling)], run: post(ceiling.url) },
        { label: CH, ...inHost(ceilingHost.verifier), run: post(ceilingHost.guestUrl) },
        { label: K, ...inHost(ceilingHost.verifier), run: post(ceilingHost.verifier.url) },
        { label: B, pids: [pid(bareProxy)], needs: [pid(upstream)], run: get(bareProxy.url) },
        {
          label: BH,
          ...inHost(proxyHost.verifier),
          needs: [redis, pid(upstream)],
          run: get(proxyHost.guestUrl),
        },
        { label: P, ...inHost(proxyHost.verifier), needs: [redis, pid(upstream)], run: get(proxyHost.proxyUrl) },
      ]
      const results = await runCpuRounds(contenders, [
        pid(ceiling),
        pid(bareProxy),
        pid(ceilingHost.verifier),
        pid(proxyHost.verifier),
        pid(fixture.controlPlane),
      ])

      // Costs: a's CPU per request ÷ b's, per round (> 1: a costs more); cheaperBy(b, a) is exactly that ratio.
      const cost = (a: string, b: string): Measured => results.cheaperBy(b, a)
      const hostCeiling = cost(CH, C)
      const ownHit = cost(K, CH)
      const hostProxy = cost(BH, B)
      const ownProxy = cost(P, BH)
      const reported = (what: string, ratio: Measured): Check => ({
        what,
        value: ratio.median,
        target: '(reported)',
        pass: true,
      })
      const show = (ratio: Measured) => `${ratio.median.toFixed(2)} [${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)}]`
      return {
        name: 'cpu-host',
        title: 'What the verifier’s process costs a server in it, and what keygate’s own code costs',
        command: 'npm run bench:cpu-host',
        method: `bench:cpu's method (servers on the server core, autocannon on the other, ${CPU_CONNECTIONS} connections × ${CPU_PIPELINING} pipelined, ${KEYS.toLocaleString('en-US')} keys with a name, an owner and meta rotated, ${CPU_ROUNDS} interleaved rounds × ${CPU_SECONDS} s, every other server paused while one is measured, CPU µs/request from /proc/<pid>/stat). The ceiling and the bare undici proxy run alone, and each as a guest inside its own verifier process (node --import bench/servers/guest.js: the verifier idle but for its background while its guest is under load; both verifiers run the same configuration, an idle reverse proxy included); keygate's own route is measured in the same process as the guest. Costs are medians of per-round ratios of CPU per request.`,
        table: {
          headers: ['server', 'CPU µs/request', 'cost', 'req/s', 'p99 ms'],
          rows: [
            [C, '1.00'],
            [CH, `${show(hostCeiling)} × alone`],
            [K, `${show(ownHit)} × the guest ceiling`],
            [B, '1.00'],
            [BH, `${show(hostProxy)} × alone`],
            [P, `${show(ownProxy)} × the guest proxy`],
          ].map(([label, ratio]) => [
            label!,
            showMeasured(results.cpu(label!), 1),
            ratio!,
            showMeasured(results.rps(label!)),
            showMeasured(results.p99(label!), 1),
          ]),
        },
        checks: [
          reported('the ceiling inside a verifier process ÷ alone, CPU per request', hostCeiling),
          reported('keygate verifyKey hit ÷ the ceiling in the same process, CPU per request', ownHit),
          reported('the bare proxy inside a verifier process ÷ alone, CPU per request', hostProxy),
          reported('keygate proxy ÷ the bare proxy in the same process, CPU per request', ownProxy),
        ],
        chart: [],
        notes: [windowsNote(results)],
        summary: `cpu-host: a verifier process costs the ceiling ${hostCeiling.median.toFixed(2)}× and the bare proxy ${hostProxy.median.toFixed(2)}×; in the same process keygate's hit costs ${ownHit.median.toFixed(2)}× the ceiling and its proxy ${ownProxy.median.toFixed(2)}× the bare proxy`,
      }
    },
    // The keys carry a name, an owner and meta, as bench:cpu's do: the ceiling answers a verdict of that shape.
    BENCH_KEY_FIELDS,
  )
}

/**
 * Every server answers what it claims before anything is measured (a fast wrong answer is not a result): a verifier
 * or ceiling verifies the bench key with the keyId expected of it (the ceiling's is a constant, keygate's the key's
 * own), and a proxy passes the key's request on, and a request without a key with the status expected of it (the
 * bare proxy passes it on, keygate's refuses it).
 */
async function checkAnswers(
  verifiers: { url: string; keyId: string }[],
  proxies: { url: string; keyless: number }[],
  body: string,
  keyHeader: Record<string, string>,
): Promise<void> {
  const reach = async (url: string, init?: RequestInit) => {
    try {
      return await fetch(url, init)
    } catch (err) {
      throw new Error(`${url}: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
    }
  }
  for (const { url, keyId } of verifiers) {
    const response = await reach(`${url}${VERIFY}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    const verdict = (await response.json()) as { valid?: boolean; name?: string; keyId?: string }
    if (verdict.valid !== true || verdict.name !== BENCH_KEY_FIELDS.name || verdict.keyId !== keyId)
      throw new Error(
        `${url} is not the server expected (a valid verdict with keyId ${keyId}): ${JSON.stringify(verdict)}`,
      )
  }
  for (const { url, keyless } of proxies) {
    const response = await reach(`${url}/`, { headers: keyHeader })
    const text = await response.text()
    const withoutKey = (await reach(`${url}/`)).status
    if (response.status !== 200 || text !== '{"hello":"world"}' || withoutKey !== keyless)
      throw new Error(
        `${url} is not the proxy expected: ${response.status} ${text}, without a key ${withoutKey} (want ${keyless})`,
      )
  }
}
