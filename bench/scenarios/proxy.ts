import { spawnSync } from 'node:child_process'
import { startNginx } from '../../test/support/nginx.js'
import { freePort } from '../../test/support/free-port.js'
import { waitFor } from '../../test/support/wait-for.js'
import { pinned, SERVER_CORE } from '../lib/cores.js'
import { onStage } from '../lib/keygate-fixture.js'
import { benchServer, startKeygate, startServer } from '../lib/processes.js'
import { showMeasured } from '../lib/report.js'
import type { ScenarioReport } from '../lib/scenario-report.js'
import { CONNECTIONS, PIPELINING, loadContender, ROUNDS, runRounds, SECONDS, type Contender } from '../lib/rounds.js'

const KEYS = 1_000

const nginxInstalled = () => ['/usr/sbin/nginx', 'nginx'].some((binary) => !spawnSync(binary, ['-v']).error)

/**
 * 5. The verifier as a reverse proxy in front of an API, against calling the API directly, and against nginx
 * doing forward-auth (auth_request) to the verifier. Everything serving runs on the server core: the API, the
 * verifier and nginx share it, as a sidecar shares its pod.
 */
export async function proxy(): Promise<ScenarioReport> {
  return onStage(KEYS, async ({ fixture, apiId, keys, onStop }) => {
    const headerSets = keys.map(({ key }) => ({ 'x-api-key': key }))
    const upstream = await startServer({ args: [benchServer('upstream')], readyPath: '/' })
    onStop(() => upstream.stop())
    const proxyPort = await freePort()
    const verifier = await startKeygate(['verifier'], {
      ...fixture.env,
      UPSTREAM_URL: upstream.url,
      PROXY_PORT: String(proxyPort),
      AUTHORIZE_API_ID: apiId,
    })
    onStop(() => verifier.stop())
    const proxyUrl = `http://127.0.0.1:${proxyPort}`
    await waitFor(
      async () => (await fetch(`${proxyUrl}/`, { headers: headerSets[0]! })).status === 200,
      'the proxy to pass a valid key',
      10_000,
      50,
    )
    if ((await fetch(`${proxyUrl}/`, { headers: { 'x-api-key': 'not-a-key' } })).status !== 401)
      throw new Error('the proxy let an invalid key through')

    const contenders: Contender[] = [
      loadContender('direct to the API', { url: upstream.url, path: '/', method: 'GET', headerSets }),
      loadContender('keygate proxy → API', { url: proxyUrl, path: '/', method: 'GET', headerSets }),
    ]
    let nginxNote = 'nginx is not installed: the forward-auth contender was skipped.'
    if (nginxInstalled()) {
      const nginx = await startNginx(
        (port) => `
  upstream api { server 127.0.0.1:${upstream.port}; keepalive 64; }
  upstream keygate { server 127.0.0.1:${verifier.port}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    location / {
      auth_request /_keygate;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-API-Key "";
      proxy_pass http://api;
    }
    location = /_keygate {
      internal;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_pass http://keygate/v1/authorize;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      proxy_set_header X-Keygate-Api-Id "${apiId}";
    }
    location = /__nginx_up { return 204; }
  }`,
        { commandPrefix: pinned(SERVER_CORE, []) },
      )
      onStop(() => nginx.stop())
      if ((await fetch(`${nginx.url}/`, { headers: headerSets[0]! })).status !== 200)
        throw new Error(`nginx forward-auth did not pass a valid key: ${nginx.errorLog()}`)
      if ((await fetch(`${nginx.url}/`, { headers: { 'x-api-key': 'not-a-key' } })).status !== 401)
        throw new Error('nginx forward-auth let an invalid key through')
      contenders.push(
        loadContender('nginx auth_request → keygate, → API', { url: nginx.url, path: '/', method: 'GET', headerSets }),
      )
      nginxNote = 'nginx (one worker, keep-alive to both) runs on the server core too.'
    }
    const results = await runRounds(contenders)
    const labels = [...results.byLabel.keys()]
    const [D, P, N] = labels as [string, string, string | undefined]
    const vsDirect = results.ratio(P, D, 'rps')
    return {
      name: 'proxy',
      title: '5. Proxy mode',
      command: 'npm run bench:proxy',
      method: `GET / with one of ${KEYS} keys in X-API-Key, rotated; ${CONNECTIONS} connections × ${PIPELINING} pipelined, ${ROUNDS} rounds × ${SECONDS} s, interleaved. The API is node:http answering a small JSON body. ${nginxNote}`,
      table: {
        headers: ['path', 'req/s', 'p50 ms', 'p99 ms'],
        rows: labels.map((label) => [
          label,
          showMeasured(results.rps(label)),
          showMeasured(results.p50(label), 1),
          showMeasured(results.p99(label), 1),
        ]),
      },
      checks: [
        { what: 'keygate proxy ÷ direct, req/s', value: vsDirect, target: '≥ 0.6', pass: vsDirect >= 0.6 },
        ...(N
          ? [
              {
                what: 'keygate proxy ÷ nginx forward-auth, req/s',
                value: results.ratio(P, N, 'rps'),
                target: '(reported)',
                pass: true,
              },
            ]
          : []),
      ],
      chart: labels.map((label) => ({ label, rps: results.rps(label), p99Ms: results.p99(label) })),
      summary: `proxy: ${Math.round(results.rps(P).median)} req/s = ${vsDirect.toFixed(2)}× direct${N ? `, ${results.ratio(P, N, 'rps').toFixed(2)}× nginx forward-auth` : ''}; p99 ${results.p99(P).median} ms`,
    }
  })
}
