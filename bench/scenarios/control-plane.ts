import { Agent, request } from 'undici'
import { BENCH_ROOT_KEY, onStage } from '../lib/keygate-fixture.js'
import { startKeygate } from '../lib/processes.js'
import { showMeasured } from '../lib/report.js'
import type { ScenarioReport } from '../lib/scenario-report.js'
import { CONNECTIONS, PIPELINING, loadContender, progress, ROUNDS, runRounds, SECONDS } from '../lib/rounds.js'
import { median, percentile } from '../lib/stats.js'

const LIST_KEYS = Number(process.env.BENCH_LIST_KEYS ?? 100_000)
const PAGE = 100

/**
 * 7. The control plane (pinned) on Redis: createKey and updateKey throughput with autocannon, then listKeys
 * page by page through one api of 100,000 keys, each page timed: a page deep in the list must cost what the
 * first one does.
 */
export async function controlPlane(): Promise<ScenarioReport> {
  return onStage(1_000, async ({ fixture, apiId, keys: updated, onStop }) => {
    const dispatcher = new Agent({ connections: 1 })
    onStop(() => dispatcher.close())
    const server = await startKeygate(['control-plane'], fixture.env)
    onStop(() => server.stop())
    const auth = { authorization: `Bearer ${BENCH_ROOT_KEY}` }
    const results = await runRounds([
      loadContender('keys.createKey', {
        url: server.url,
        path: '/v1/keys.createKey',
        headers: auth,
        bodies: [JSON.stringify({ apiId, name: 'bench' })],
      }),
      loadContender('keys.updateKey', {
        url: server.url,
        path: '/v1/keys.updateKey',
        headers: auth,
        bodies: updated.map(({ keyId }, i) => JSON.stringify({ keyId, name: `bench-${i}` })),
      }),
    ])
    const [C, U] = [...results.byLabel.keys()] as [string, string]

    // Fill the api up to LIST_KEYS, then walk it.
    const { total } = await list(server.url, apiId, undefined, dispatcher, auth)
    if (total < LIST_KEYS) {
      progress(`creating ${(LIST_KEYS - total).toLocaleString('en-US')} more keys for listKeys`)
      await fixture.createKeys(apiId, LIST_KEYS - total, 64)
    }
    const inApi = (await list(server.url, apiId, undefined, dispatcher, auth)).total
    // One walk through every page (counting the keys, keeping each page's cursor), then the first tenth of the pages
    // and the last tenth timed alternately, a first page then a last one: a noisy stretch of the machine hits both
    // alike.
    progress(`listKeys through ${LIST_KEYS.toLocaleString('en-US')}+ keys, ${PAGE} a page`)
    const cursors: (string | undefined)[] = []
    let cursor: string | undefined
    let seen = 0
    for (;;) {
      const page = await list(server.url, apiId, cursor, dispatcher, auth)
      if (page.keys.length === 0) break
      cursors.push(cursor)
      seen += page.keys.length
      cursor = page.cursor
      if (!cursor) break
    }
    const timed = async (at: string | undefined) => {
      const start = performance.now()
      await list(server.url, apiId, at, dispatcher, auth)
      return performance.now() - start
    }
    const tenth = Math.max(1, Math.floor(cursors.length / 10))
    const first: number[] = []
    const last: number[] = []
    for (let i = 0; i < tenth; i++) {
      first.push(await timed(cursors[i]))
      last.push(await timed(cursors[cursors.length - tenth + i]))
    }
    const pageMs = cursors
    const depthRatio = median(last) / median(first)
    const ms = (value: number) => value.toFixed(2)
    return {
      name: 'control-plane',
      title: '7. Control plane',
      command: 'npm run bench:control-plane',
      method: `A control plane pinned to the server core on its own Redis; ${CONNECTIONS} connections × ${PIPELINING} pipelined, ${ROUNDS} rounds × ${SECONDS} s, interleaved; updateKey renames one of 1,000 keys per call (each a revision, a log entry and a publish). Then apis.listKeys walked ${pageMs.length.toLocaleString('en-US')} pages of ${PAGE} (${seen.toLocaleString('en-US')} keys), and its first and last ${tenth} pages were timed alternately, one request at a time.`,
      table: {
        headers: ['operation', 'req/s', 'p50 ms', 'p99 ms'],
        rows: [
          ...[C, U].map((label) => [
            label,
            showMeasured(results.rps(label)),
            showMeasured(results.p50(label), 1),
            showMeasured(results.p99(label), 1),
          ]),
          [`apis.listKeys, first ${tenth} pages`, '—', ms(median(first)), ms(percentile(first, 99))],
          [`apis.listKeys, last ${tenth} pages`, '—', ms(median(last)), ms(percentile(last, 99))],
        ],
      },
      checks: [
        {
          what: 'listKeys page time, last tenth ÷ first tenth (median)',
          value: depthRatio,
          target: '≤ 1.5 (constant per page)',
          pass: depthRatio <= 1.5,
        },
        {
          what: 'keys listed ÷ keys in the api',
          value: seen / inApi,
          target: '= 1',
          pass: seen === inApi && inApi >= LIST_KEYS,
        },
      ],
      chart: [C, U].map((label) => ({ label, rps: results.rps(label), p99Ms: results.p99(label) })),
      summary: `control plane: createKey ${Math.round(results.rps(C).median)} req/s, updateKey ${Math.round(results.rps(U).median)} req/s; listKeys page ${ms(median(first))} ms first vs ${ms(median(last))} ms last of ${pageMs.length} (${depthRatio.toFixed(2)}×)`,
    }
  })
}

async function list(
  url: string,
  apiId: string,
  cursor: string | undefined,
  dispatcher: Agent,
  headers: Record<string, string>,
) {
  const query = new URLSearchParams({ apiId, limit: String(PAGE), ...(cursor ? { cursor } : {}) })
  const response = await request(`${url}/v1/apis.listKeys?${query.toString()}`, { headers, dispatcher })
  if (response.statusCode !== 200) throw new Error(`listKeys: ${response.statusCode} ${await response.body.text()}`)
  return (await response.body.json()) as { keys: unknown[]; total: number; cursor?: string }
}
