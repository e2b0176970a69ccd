import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse, stringify } from 'yaml'
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1'
import { startTestControlPlane, startTestVerifier, TEST_ROOT_KEY, type TestServer } from '../support/apps.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

// Offline checks of deploy/observability: the alert rules and their unit tests through promtool, every PromQL
// expression of the dashboard through promtool, and every metric and label they name against the real /metrics.

const DIR = fileURLToPath(new URL('../../deploy/observability/', import.meta.url))
const read = (file: string) => readFileSync(join(DIR, file), 'utf8')

interface AlertRule { alert?: string; record?: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> }
interface RuleGroup { name: string; rules: AlertRule[] }
const ruleObject = parse(read('prometheus-rule.yaml'))
const groups: RuleGroup[] = ruleObject.spec.groups
const alerts = groups.flatMap((group) => group.rules).filter((rule) => rule.alert !== undefined)

interface Target { refId: string; expr: string; datasource?: { uid?: string } }
interface Panel { id: number; type: string; title: string; datasource?: { uid?: string }; targets?: Target[]; panels?: Panel[]; gridPos: { x: number; y: number; w: number; h: number } }
interface Variable { name: string; type: string; query: string | { query: string }; datasource?: { uid?: string } }
const dashboard: { uid: string; title: string; schemaVersion: number; panels: Panel[]; templating: { list: Variable[] } } = JSON.parse(read('grafana-dashboard.json'))
const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])])
const queryPanels = panels.filter((panel) => panel.type !== 'row')

/** Every PromQL expression of the dashboard: panel targets, and the series selector of each query variable. */
const dashboardExprs: { where: string; expr: string }[] = [
  ...queryPanels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ where: `panel ${panel.id} "${panel.title}" ${target.refId}`, expr: target.expr }))),
  ...dashboard.templating.list.filter((variable) => variable.type === 'query').map((variable) => {
    const query = typeof variable.query === 'string' ? variable.query : variable.query.query
    const selector = /^label_values\((.*),\s*\w+\)$/.exec(query)?.[1] ?? /^query_result\((.*)\)$/.exec(query)?.[1]
    if (selector === undefined) throw new Error(`variable ${variable.name}: cannot read the series selector of ${query}`)
    return { where: `variable ${variable.name}`, expr: selector }
  }),
]

const PROMTOOL_MISSING =
  'promtool was not found on PATH: the observability checks need it and are never skipped.\n' +
  'Install it with: sudo apt-get install -y prometheus   (Debian/Ubuntu; it ships /usr/bin/promtool)'

function promtool(args: string[]): string {
  const run = spawnSync('promtool', args, { encoding: 'utf8' })
  if (run.error) throw new Error(`${PROMTOOL_MISSING}\n(${run.error.message})`)
  if (run.status !== 0) throw new Error(`promtool ${args.join(' ')} failed (exit ${run.status}):\n${run.stdout}${run.stderr}`)
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

    const cases = (parse(read('rules.test.yaml')).tests as { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[])
      .flatMap((test) => test.alert_rule_test ?? [])
    for (const name of new Set(alerts.map((rule) => rule.alert!))) {
      expect(cases.some((c) => c.alertname === name && (c.exp_alerts?.length ?? 0) > 0), `${name}: a case where it fires`).toBe(true)
      expect(cases.some((c) => c.alertname === name && (c.exp_alerts?.length ?? 0) === 0), `${name}: a case where it must not fire`).toBe(true)
    }
  })

  it('gives every alert a for, a severity, a summary and a description, and documents it in the README', () => {
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

describe('Grafana dashboard (deploy/observability/grafana-dashboard.json)', () => {
  it('is importable: a schema version, a uid, a Prometheus datasource variable every query uses, a sane layout', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36)
    expect(dashboard.uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/)
    expect(dashboard.templating.list).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }))
    for (const variable of dashboard.templating.list.filter((v) => v.type === 'query')) {
      expect(variable.datasource?.uid, `variable ${variable.name}`).toBe('${datasource}')
    }
    expect(new Set(panels.map((panel) => panel.id)).size).toBe(panels.length)
    for (const panel of queryPanels) {
      expect(panel.datasource?.uid, `panel ${panel.title}`).toBe('${datasource}')
      expect(panel.targets?.length, `panel ${panel.title}: targets`).toBeGreaterThan(0)
      for (const target of panel.targets ?? []) expect(target.datasource?.uid, `panel ${panel.title} ${target.refId}`).toBe('${datasource}')
      expect(panel.gridPos.x + panel.gridPos.w, `panel ${panel.title}: width`).toBeLessThanOrEqual(24)
    }
    const kustomization = parse(read('kustomization.yaml'))
    expect(kustomization.resources).toContain('prometheus-rule.yaml')
    expect(kustomization.configMapGenerator).toContainEqual(expect.objectContaining({
      files: [expect.stringMatching(/=grafana-dashboard\.json$/)],
      options: expect.objectContaining({ labels: expect.objectContaining({ grafana_dashboard: '1' }) }),
    }))
  })

  it('has panels for what operators watch', () => {
    const all = dashboardExprs.map((e) => e.expr).join('\n')
    for (const wanted of [
      /rate\(keygate_http_requests_total\{[^}]*route="\/v1\/keys\.verifyKey"/,
      /histogram_quantile\(0\.5, [^\n]*keygate_http_request_duration_seconds_bucket\{[^}]*route="\/v1\/keys\.verifyKey"/,
      /histogram_quantile\(0\.99, [^\n]*keygate_http_request_duration_seconds_bucket\{[^}]*route="\/v1\/keys\.verifyKey"/,
      /keygate_verify_verdicts_total/, /keygate_cache_hit_ratio/, /keygate_revision_lag/, /keygate_last_poll_age_seconds/,
      /keygate_staleness_seconds/, /keygate_max_staleness_seconds/, /keygate_stale_answers_total/,
      /keygate_change_propagation_seconds_bucket/, /keygate_change_feed_connected/, /keygate_ready/, /keygate_redis_errors_total/,
      /status=~"5\.\."/,
    ]) expect(all).toMatch(wanted)
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

describe('metrics the dashboard and the rules name exist on real servers', () => {
  let redis: RedisServer
  const servers: TestServer[] = []
  let metrics: Map<string, Set<string>>

  beforeAll(async () => {
    redis = await startRedisServer()
    const controlPlane = await startTestControlPlane({ redisUrl: redis.url })
    const verifier = await startTestVerifier({ redisUrl: redis.url })
    servers.push(controlPlane, verifier)
    // Traffic, so labelled series (requests, latency, propagation) have samples to read labels from.
    const post = async (server: TestServer, url: string, payload: object) => {
      const reply = await server.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${TEST_ROOT_KEY}` }, payload })
      expect(reply.statusCode, `${url}: ${reply.body}`).toBe(200)
      return reply.json()
    }
    const api = await post(controlPlane, '/v1/apis.createApi', { name: 'observability' })
    const { key, keyId } = await post(controlPlane, '/v1/keys.createKey', { apiId: api.apiId })
    for (const server of servers) await post(server, '/v1/keys.verifyKey', { key })
    await post(verifier, '/v1/keys.verifyKey', { key })
    await post(controlPlane, '/v1/keys.updateKey', { keyId, enabled: false })
    await waitFor(async () => (await post(verifier, '/v1/keys.verifyKey', { key })).valid === false, 'the verifier to apply the disable')
    const texts = await Promise.all(servers.map(async (server) => (await server.app.inject({ method: 'GET', url: '/metrics' })).body))
    metrics = exposed(texts.join('\n'))
  })
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()))
    await redis?.stop()
  })

  const sources = () => [
    ...alerts.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr })),
    ...dashboardExprs,
  ]

  it('every keygate_ metric named', () => {
    const missing: string[] = []
    for (const { where, expr } of sources()) {
      for (const [name] of expr.matchAll(/\bkeygate_[a-zA-Z0-9_]+/g)) if (!metrics.has(name)) missing.push(`${where}: ${name}`)
    }
    expect(missing).toEqual([])
    // The check has teeth: a name the servers do not expose is reported.
    expect(metrics.has('keygate_verify_verdicts_total')).toBe(true)
    expect(metrics.has('keygate_verify_verdict_total')).toBe(false)
  })

  it('every label matched on or grouped by', () => {
    const missing: string[] = []
    for (const { where, expr } of sources()) {
      for (const [, name, matchers] of expr.matchAll(/\b(keygate_[a-zA-Z0-9_]+)\{([^}]*)\}/g)) {
        for (const [, label] of matchers!.matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)) {
          if (!TARGET_LABELS.has(label!) && !metrics.get(name!)?.has(label!)) missing.push(`${where}: ${name}{${label}}`)
        }
      }
      // A grouping label must be on at least one metric of the expression (or be a target label).
      const named = [...expr.matchAll(/\bkeygate_[a-zA-Z0-9_]+/g)].map(([name]) => name)
      for (const [, list] of expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)) {
        for (const label of list!.split(',').map((l) => l.trim()).filter(Boolean)) {
          if (!TARGET_LABELS.has(label) && !named.some((name) => metrics.get(name)?.has(label))) missing.push(`${where}: by ${label}`)
        }
      }
    }
    expect(missing).toEqual([])
  })
})
