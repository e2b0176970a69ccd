import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse, parseAllDocuments, stringify } from 'yaml'
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1'
import { pino } from 'pino'
import { verifierConfig } from '../../shared/config/config.js'
import type { KeygateServer } from '../../shared/http/keygate-server.js'
import { startVerifier } from '../../cli/verifier-command.js'
import { SHARD_COUNT } from '../../shared/shards.js'
import { redisKeys } from '../../shared/store/redis/redis-keys.js'
import { startTestControlPlane, startTestVerifier, TEST_ROOT_KEY, type TestServer } from '../support/apps.js'
import { startEchoUpstream, type EchoUpstream } from '../support/echo-upstream.js'
import { freePort } from '../support/free-port.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'

// Offline checks of deploy/observability: the alert rules and their unit tests through promtool, every PromQL
// expression of the dashboard through promtool, and every metric and label they name against the real /metrics.

const DIR = fileURLToPath(new URL('../../deploy/observability/', import.meta.url))
const read = (file: string) => readFileSync(join(DIR, file), 'utf8')

interface AlertRule {
  alert?: string
  record?: string
  expr: string
  for?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
}
interface RuleGroup {
  name: string
  rules: AlertRule[]
}
const ruleObject = parse(read('prometheus-rule.yaml'))
const groups: RuleGroup[] = ruleObject.spec.groups
const alerts = groups.flatMap((group) => group.rules).filter((rule) => rule.alert !== undefined)

interface Target {
  refId: string
  expr: string
  datasource?: { uid?: string }
}
interface Panel {
  id: number
  type: string
  title: string
  datasource?: { uid?: string }
  targets?: Target[]
  panels?: Panel[]
  gridPos: { x: number; y: number; w: number; h: number }
}
interface Variable {
  name: string
  type: string
  query: string | { query: string }
  datasource?: { uid?: string }
}
const dashboard: {
  uid: string
  title: string
  schemaVersion: number
  panels: Panel[]
  templating: { list: Variable[] }
} = JSON.parse(read('grafana-dashboard.json'))
const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])])
const queryPanels = panels.filter((panel) => panel.type !== 'row')

/** Every PromQL expression of the dashboard: panel targets, and the series selector of each query variable. */
const dashboardExprs: { where: string; expr: string }[] = [
  ...queryPanels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      where: `panel ${panel.id} "${panel.title}" ${target.refId}`,
      expr: target.expr,
    })),
  ),
  ...dashboard.templating.list
    .filter((variable) => variable.type === 'query')
    .map((variable) => {
      const query = typeof variable.query === 'string' ? variable.query : variable.query.query
      const selector = /^label_values\((.*),\s*\w+\)$/.exec(query)?.[1] ?? /^query_result\((.*)\)$/.exec(query)?.[1]
      if (selector === undefined)
        throw new Error(`variable ${variable.name}: cannot read the series selector of ${query}`)
      return { where: `variable ${variable.name}`, expr: selector }
    }),
]

const PROMTOOL_MISSING =
  'promtool was not found on PATH: the observability checks need it and are never skipped.\n' +
  'Install it with: sudo apt-get install -y prometheus   (Debian/Ubuntu; it ships /usr/bin/promtool)'

function promtool(args: string[]): string {
  const run = spawnSync('promtool', args, { encoding: 'utf8' })
  if (run.error) throw new Error(`${PROMTOOL_MISSING}\n(${run.error.message})`)
  if (run.status !== 0)
    throw new Error(`promtool ${args.join(' ')} failed (exit ${run.status}):\n${run.stdout}${run.stderr}`)
  return run.stdout
}

let work: string
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'keygate-observability-'))
})
afterAll(() => {
  rmSync(work, { recursive: true, force: true })
})

describe('alert rules (deploy/observability/prometheus-rule.yaml)', () => {
  it('is a valid PrometheusRule and promtool accepts its groups', () => {
    expect(ruleObject).toMatchObject({ apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule' })
    new PrometheusRule(ruleObject).validate()
    writeFileSync(join(work, 'rules.yaml'), stringify({ groups }))
    expect(promtool(['check', 'rules', join(work, 'rules.yaml')])).toContain('SUCCESS')
  })

  it('passes its unit tests (rules.test.yaml), which fire and hold back every alert', () => {
    writeFileSync(join(work, 'rules.yaml'), stringify({ groups }))
    copyFileSync(join(DIR, 'rules.test.yaml'), join(work, 'rules.test.yaml'))
    expect(promtool(['test', 'rules', join(work, 'rules.test.yaml')])).toContain('SUCCESS')

    const cases = (
      parse(read('rules.test.yaml')).tests as { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[]
    ).flatMap((test) => test.alert_rule_test ?? [])
    for (const name of new Set(alerts.map((rule) => rule.alert!))) {
      expect(
        cases.some((c) => c.alertname === name && (c.exp_alerts?.length ?? 0) > 0),
        `${name}: a case where it fires`,
      ).toBe(true)
      expect(
        cases.some((c) => c.alertname === name && (c.exp_alerts?.length ?? 0) === 0),
        `${name}: a case where it must not fire`,
      ).toBe(true)
    }
  })

  it('gives every alert a for, a severity, a summary and a description, and documents it in deploy/observability/README.md', () => {
    const readme = read('README.md')
    expect(alerts.length).toBeGreaterThanOrEqual(8)
    for (const rule of alerts) {
      expect(rule.for, `${rule.alert}: for`).toMatch(/^\d+[smh]$/)
      expect(['critical', 'warning'], `${rule.alert}: severity`).toContain(rule.labels?.severity)
      expect(rule.annotations?.summary, `${rule.alert}: summary`).toBeTruthy()
      expect(rule.annotations?.description, `${rule.alert}: description`).toBeTruthy()
      expect(readme, `${rule.alert} in deploy/observability/README.md`).toContain(`### ${rule.alert}`)
    }
  })
})

describe('deploy/observability/README.md', () => {
  it('names the monitor kinds the manifests scrape Keygate with, and no other', () => {
    const deploy = fileURLToPath(new URL('../../deploy/', import.meta.url))
    const kinds = new Set(
      readdirSync(deploy, { recursive: true, encoding: 'utf8' })
        .filter((file) => /\.ya?ml$/.test(file))
        .flatMap((file) =>
          parseAllDocuments(readFileSync(join(deploy, file), 'utf8')).map(
            (doc) => doc.toJS() as { apiVersion?: string; kind?: string } | null,
          ),
        )
        .filter((object) => object?.apiVersion?.startsWith('monitoring.coreos.com/'))
        .map((object) => object!.kind!),
    )
    const scraping = /^- \*\*Scraping\*\*[\s\S]*?(?=^\S|^- )/m.exec(read('README.md'))?.[0] ?? ''
    expect(scraping, 'a Scraping paragraph').not.toBe('')
    for (const kind of ['ServiceMonitor', 'PodMonitor'])
      expect(scraping.includes(kind), `${kind}: in the README iff in deploy/`).toBe(kinds.has(kind))
  })

  it("every Keygate metric the dashboard and the rules read is documented in docs/operations.md (Node's process metrics aside)", () => {
    const operations = readFileSync(fileURLToPath(new URL('../../docs/operations.md', import.meta.url)), 'utf8')
    const named = new Set(
      [...dashboardExprs.map((e) => e.expr), ...alerts.map((rule) => rule.expr)].flatMap((expr) =>
        [...expr.matchAll(/\bkeygate_[a-zA-Z0-9_]+/g)].map(([name]) => name.replace(/_(bucket|sum|count)$/, '')),
      ),
    )
    const undocumented = [...named].filter(
      (name) => !/^keygate_(process|nodejs)_/.test(name) && !operations.includes(`\`${name}`),
    )
    expect(undocumented).toEqual([])
  })
})

describe('Grafana dashboard (deploy/observability/grafana-dashboard.json)', () => {
  it('is importable: a schema version, a uid, a Prometheus datasource variable every query uses, a sane layout', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36)
    expect(dashboard.uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/)
    expect(dashboard.templating.list).toContainEqual(
      expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }),
    )
    for (const variable of dashboard.templating.list.filter((v) => v.type === 'query')) {
      expect(variable.datasource?.uid, `variable ${variable.name}`).toBe('${datasource}')
    }
    expect(new Set(panels.map((panel) => panel.id)).size).toBe(panels.length)
    for (const panel of queryPanels) {
      expect(panel.datasource?.uid, `panel ${panel.title}`).toBe('${datasource}')
      expect(panel.targets?.length, `panel ${panel.title}: targets`).toBeGreaterThan(0)
      for (const target of panel.targets ?? [])
        expect(target.datasource?.uid, `panel ${panel.title} ${target.refId}`).toBe('${datasource}')
      expect(panel.gridPos.x + panel.gridPos.w, `panel ${panel.title}: width`).toBeLessThanOrEqual(24)
    }
    const kustomization = parse(read('kustomization.yaml'))
    expect(kustomization.resources).toContain('prometheus-rule.yaml')
    expect(kustomization.configMapGenerator).toContainEqual(
      expect.objectContaining({
        files: [expect.stringMatching(/=grafana-dashboard\.json$/)],
        options: expect.objectContaining({ labels: expect.objectContaining({ grafana_dashboard: '1' }) }),
      }),
    )
  })

  it('has panels for what operators watch', () => {
    const all = dashboardExprs.map((e) => e.expr).join('\n')
    for (const wanted of [
      /rate\(keygate_http_requests_total\{[^}]*route=~"[^"]*\/v1\/authorize/,
      /histogram_quantile\(0\.5, [^\n]*keygate_http_request_duration_seconds_bucket\{[^}]*route=~"[^"]*\/v1\/authorize/,
      /histogram_quantile\(0\.99, [^\n]*keygate_http_request_duration_seconds_bucket\{[^}]*route=~"[^"]*\/v1\/authorize/,
      /rate\(keygate_proxy_requests_total\{/,
      /histogram_quantile\(0\.99, [^\n]*keygate_proxy_request_duration_seconds_bucket\{/,
      /keygate_proxy_requests_total\{[^}]*status=~"5\.\.", source="keygate"/,
      /keygate_verify_verdicts_total/,
      /keygate_cache_hit_ratio/,
      /keygate_revision_lag/,
      /keygate_last_poll_age_seconds/,
      /keygate_staleness_seconds/,
      /keygate_max_staleness_seconds/,
      /keygate_stale_answers_total/,
      /keygate_change_propagation_seconds_bucket/,
      /keygate_change_feed_connected/,
      /keygate_ready/,
      /keygate_redis_errors_total/,
      /status=~"5\.\."/,
      /rate\(keygate_webhook_attempts_total\{/,
      /keygate_webhook_attempts_total\{[^}]*outcome!="delivered"/,
      /histogram_quantile\(0\.5, [^\n]*keygate_webhook_delivery_latency_seconds_bucket\{/,
      /histogram_quantile\(0\.99, [^\n]*keygate_webhook_delivery_latency_seconds_bucket\{/,
      /keygate_webhook_request_duration_seconds_bucket/,
      /max by \(namespace\) \(keygate_webhook_queue_depth\{/,
      /keygate_webhook_events_total/,
      /keygate_webhook_log_gaps_total/,
    ])
      expect(all).toMatch(wanted)
  })

  it('has only PromQL that promtool parses (template variables substituted)', () => {
    const rules = dashboardExprs.map(({ where, expr }, index) => {
      const substituted = expr
        .replace(/\$\{?__(rate_interval|interval|range)\}?/g, '5m')
        .replace(/\$\{?(namespace|service|pod)(:\w+)?\}?/g, '.*')
      if (substituted.includes('$')) throw new Error(`${where}: unknown template variable in ${expr}`)
      return { record: `keygate_dashboard:expr_${index}`, expr: substituted }
    })
    const file = join(work, 'dashboard-rules.yaml')
    writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules }] }))
    expect(promtool(['check', 'rules', file])).toContain(`SUCCESS: ${rules.length} rules found`)
  })
})

// Labels Prometheus adds to a target's series (Kubernetes service discovery, the Prometheus Operator).
const TARGET_LABELS = new Set(['namespace', 'pod', 'job', 'instance', 'container', 'endpoint'])

/** Metric names and the label names each carries in Prometheus text; histograms also under _bucket/_sum/_count. */
function exposed(text: string): Map<string, Set<string>> {
  const metrics = new Map<string, Set<string>>()
  const labelsOf = (name: string) => metrics.get(name) ?? metrics.set(name, new Set()).get(name)!
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\w+)$/.exec(line)
    if (type) {
      labelsOf(type[1]!)
      if (type[2] === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) labelsOf(type[1]! + suffix)
      continue
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+$/.exec(line)
    if (!sample) continue
    const labels = labelsOf(sample[1]!)
    for (const label of (sample[2] ?? '').matchAll(/([a-zA-Z_]\w*)="(?:[^"\\]|\\.)*"/g)) labels.add(label[1]!)
  }
  return metrics
}

/** The values `label` takes on samples of `metric` in Prometheus text. */
function labelValues(text: string, metric: string, label: string): Set<string> {
  const values = new Set<string>()
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`)) continue
    const value = new RegExp(`[{,]${label}="((?:[^"\\\\]|\\\\.)*)"`).exec(line)?.[1]
    if (value !== undefined) values.add(value)
  }
  return values
}

type WebhookReceiver = Awaited<ReturnType<typeof startWebhookReceiver>>

/**
 * An endpoint on this machine (the control plane's policy allows it) that takes every event, registered once the
 * webhook deriver has taken each shard's position, so that the writes that follow are sent to it.
 */
async function webhookEndpoint(controlPlane: TestServer, receiver: WebhookReceiver): Promise<void> {
  const { webhooks } = controlPlane.backend.store
  await waitFor(
    async () => (await webhooks.readCursors()).size === SHARD_COUNT,
    "the webhook deriver to take each shard's position",
  )
  const secret = `whsec_${randomBytes(32).toString('base64')}`
  receiver.useSecret(secret)
  const now = Date.now()
  await webhooks.createEndpoint({
    id: 'whep_observability',
    url: receiver.url,
    eventTypes: [],
    enabled: true,
    secrets: [{ secret, createdAt: now }],
    createdAt: now,
  })
}

/**
 * A written shard's revision gone from Redis (as a failover to an empty replica leaves it) while the webhooks' state
 * is not: the deriver cannot go on from its position in that shard's log, and counts a log gap.
 */
async function loseShardLog(controlPlane: TestServer, redis: RedisServer): Promise<void> {
  const cursors = await controlPlane.backend.store.webhooks.readCursors()
  const [shard] = [...cursors].find(([, position]) => position.epoch !== '') ?? []
  if (shard === undefined) throw new Error('no shard has been written since the webhook deriver started')
  await redis.admin.del(redisKeys.revision(shard))
}

describe('metrics the dashboard and the rules name exist on real servers', () => {
  let redis: RedisServer
  let upstream: EchoUpstream
  let receiver: WebhookReceiver
  let proxied: KeygateServer | undefined
  const servers: TestServer[] = []
  let metrics: Map<string, Set<string>>
  /** Routes keygate_http_requests_total names on the verifier after a verification through every entry point. */
  let verifierRoutes: Set<string>

  beforeAll(async () => {
    redis = await startRedisServer()
    upstream = await startEchoUpstream()
    receiver = await startWebhookReceiver()
    const controlPlane = await startTestControlPlane({
      redisUrl: redis.url,
      webhookPolicy: { allowPrivateAddresses: true },
    })
    const verifier = await startTestVerifier({ redisUrl: redis.url })
    servers.push(controlPlane, verifier)
    const metricsText = async (app: KeygateServer) => (await app.inject({ method: 'GET', url: '/metrics' })).body
    await webhookEndpoint(controlPlane, receiver)
    // Traffic, so labelled series (requests, latency, propagation) have samples to read labels from.
    const post = async (server: TestServer, url: string, payload: object) => {
      const reply = await server.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
        payload,
      })
      expect(reply.statusCode, `${url}: ${reply.body}`).toBe(200)
      return reply.json()
    }
    const api = await post(controlPlane, '/v1/apis.createApi', { name: 'observability' })
    // A verifier as the reverse-proxy sidecar example runs it (UPSTREAM_URL): its proxy's metrics are on its /metrics.
    const proxyPort = await freePort()
    proxied = await startVerifier(
      verifierConfig([], {
        REDIS_URL: redis.url,
        HOST: '127.0.0.1',
        PORT: '0',
        UPSTREAM_URL: upstream.url,
        PROXY_PORT: String(proxyPort),
        AUTHORIZE_API_ID: api.apiId,
      }),
      pino({ level: 'silent' }),
    )
    const { key, keyId } = await post(controlPlane, '/v1/keys.createKey', { apiId: api.apiId })
    for (const server of servers) await post(server, '/v1/keys.verifyKey', { key })
    await post(verifier, '/v1/keys.verifyKey', { key })
    // Forward-auth, as nginx auth_request asks (/v1/authorize) and as Envoy ext_authz does (the original path
    // appended).
    for (const url of ['/v1/authorize', '/v1/authorize/orders/17']) {
      const headers = { 'x-api-key': key, 'x-keygate-api-id': api.apiId }
      expect((await verifier.app.inject({ method: 'GET', url, headers })).statusCode, url).toBe(200)
    }
    // Through the reverse proxy: forwarded (the upstream's 200) and refused (Keygate's 401).
    expect((await fetch(`http://127.0.0.1:${proxyPort}/orders`, { headers: { 'x-api-key': key } })).status).toBe(200)
    expect((await fetch(`http://127.0.0.1:${proxyPort}/orders`)).status).toBe(401)
    // Each response is timed once finished, just after the client has it.
    await waitFor(
      async () =>
        /^keygate_proxy_request_duration_seconds_count\{[^}]*source="upstream"/m.test(
          (await proxied!.inject({ method: 'GET', url: '/metrics' })).body,
        ),
      'the proxied response to be timed',
    )
    // The key's webhook events are sent to the receiver; the latency is observed once the 2xx is settled.
    await waitFor(
      async () => /^keygate_webhook_delivery_latency_seconds_count\{/m.test(await metricsText(controlPlane.app)),
      'a webhook to be delivered',
    )
    await post(controlPlane, '/v1/keys.updateKey', { keyId, enabled: false })
    await waitFor(
      async () => (await post(verifier, '/v1/keys.verifyKey', { key })).valid === false,
      'the verifier to apply the disable',
    )
    await loseShardLog(controlPlane, redis)
    await waitFor(
      async () => /^keygate_webhook_log_gaps_total\{[^}]*reason="epoch"/m.test(await metricsText(controlPlane.app)),
      'the webhook log gap to be counted',
    )
    const texts = await Promise.all(
      [...servers.map((server) => server.app), proxied].map(
        async (app) => (await app.inject({ method: 'GET', url: '/metrics' })).body,
      ),
    )
    metrics = exposed(texts.join('\n'))
    verifierRoutes = labelValues(texts[1]!, 'keygate_http_requests_total', 'route')
  })
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()))
    await proxied?.close()
    await upstream?.stop()
    await receiver?.stop()
    await redis?.stop()
  })

  const sources = () => [
    ...alerts.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr })),
    ...dashboardExprs,
  ]

  it('every keygate_ metric named', () => {
    const missing: string[] = []
    for (const { where, expr } of sources()) {
      for (const [name] of expr.matchAll(/\bkeygate_[a-zA-Z0-9_]+/g))
        if (!metrics.has(name)) missing.push(`${where}: ${name}`)
    }
    expect(missing).toEqual([])
    // The check has teeth: a name the servers do not expose is reported.
    expect(metrics.has('keygate_verify_verdicts_total')).toBe(true)
    expect(metrics.has('keygate_verify_verdict_total')).toBe(false)
  })

  it('the verification panels match every route a verifier verifies keys on', () => {
    const entryPoints = ['/v1/keys.verifyKey', '/v1/authorize', '/v1/authorize/*']
    for (const route of entryPoints) expect(verifierRoutes, `the verifier counts ${route}`).toContain(route)
    const verificationPanels = queryPanels.filter((panel) => /^Verification/.test(panel.title))
    expect(verificationPanels.map((panel) => panel.title)).toEqual(['Verifications rate', 'Verification latency'])
    for (const panel of verificationPanels) {
      for (const target of panel.targets!) {
        const matcher = /\broute=~"((?:[^"\\]|\\.)*)"/.exec(target.expr)?.[1]
        expect(matcher, `panel ${panel.title} ${target.refId}: a route=~ matcher`).toBeDefined()
        // PromQL regexes are anchored at both ends; the string's own escapes (\\) are one level.
        const regex = new RegExp(`^(?:${matcher!.replace(/\\\\/g, '\\')})$`)
        for (const route of entryPoints)
          expect(regex.test(route), `panel ${panel.title} ${target.refId} matches ${route}`).toBe(true)
        for (const route of ['/readyz', '/metrics', 'unmatched'])
          expect(regex.test(route), `panel ${panel.title} ${target.refId} leaves out ${route}`).toBe(false)
      }
    }
  })

  it('every label matched on or grouped by', () => {
    const missing: string[] = []
    for (const { where, expr } of sources()) {
      for (const [, name, matchers] of expr.matchAll(/\b(keygate_[a-zA-Z0-9_]+)\{([^}]*)\}/g)) {
        for (const [, label] of matchers!.matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)) {
          if (!TARGET_LABELS.has(label!) && !metrics.get(name!)?.has(label!))
            missing.push(`${where}: ${name}{${label}}`)
        }
      }
      // A grouping label must be on at least one metric of the expression (or be a target label).
      const named = [...expr.matchAll(/\bkeygate_[a-zA-Z0-9_]+/g)].map(([name]) => name)
      for (const [, list] of expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)) {
        for (const label of list!
          .split(',')
          .map((l) => l.trim())
          .filter(Boolean)) {
          if (!TARGET_LABELS.has(label) && !named.some((name) => metrics.get(name)?.has(label)))
            missing.push(`${where}: by ${label}`)
        }
      }
    }
    expect(missing).toEqual([])
  })
})
