import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runKeygate, startKeygate, type KeygateProcess } from '../support/processes.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { startSentinel } from '../support/sentinel.js'
import { stopAfterAll } from '../support/stop-after-all.js'
import { waitFor } from '../support/wait-for.js'
import { startRedisCluster } from '../support/redis-cluster.js'

/**
 * `keygate root-key …` as a real process against real redis-servers (one server by URL, behind Sentinel, a
 * 3-master Cluster), checked against a real `keygate control-plane`: what the command line revokes, the control
 * plane refuses at its next call. Keys appear once, on stdout, and only from create and roll.
 */
const BOOTSTRAP = 'cli-test-bootstrap-root-key-0123456789'
const KEY = /^kgroot_\w+$/

/** A management call to a control plane process as `rootKey`: its HTTP status, and the error code of a refusal. */
async function statusAs(controlPlane: KeygateProcess, rootKey: string, path = 'rootKeys.listRootKeys') {
  const response = await fetch(`${controlPlane.url}/v1/${path}`, { headers: { authorization: `Bearer ${rootKey}` } })
  if (response.ok) return String(response.status)
  return `${response.status} ${((await response.json()) as { error: { code: string } }).error.code}`
}

/**
 * Whether a verifier process accepts `rootKey` on v2's keys.verifyKey: 200 once it does (a root key without
 * verify_key is answered NOT_FOUND for the key, still 200), 401 for one it does not.
 */
async function verifierStatusAs(verifier: KeygateProcess, rootKey: string): Promise<number> {
  const response = await fetch(`${verifier.url}/v2/keys.verifyKey`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${rootKey}` },
    body: JSON.stringify({ key: 'sk_any' }),
  })
  return response.status
}
/** Verifiers learn of root-key changes through the change feed: within the bound (here at once, barring a poll). */
const onVerifier = (verifier: KeygateProcess, rootKey: string, status: number) =>
  waitFor(
    async () => (await verifierStatusAs(verifier, rootKey)) === status,
    `the verifier to answer ${status}`,
    5_000,
    10,
  )

/** What v1 answers a root key it does not know (403, as Unkey v1 did). */
const REFUSED = '403 UNAUTHORIZED'

/** `keygate root-key …` against `env`'s Redis; fails the test on an unexpected exit code. */
async function rootKey(env: Record<string, string>, args: string[], expectedCode = 0) {
  const result = await runKeygate(['root-key', ...args], env)
  expect(result.code, `keygate root-key ${args.join(' ')}: ${result.stderr}`).toBe(expectedCode)
  return result
}

/** The one line a create or roll prints on stdout: the key. */
function keyOf(stdout: string): string {
  expect(stdout).toMatch(/^kgroot_\w+\n$/)
  return stdout.trim()
}

describe('keygate root-key on one Redis server (REDIS_URL)', () => {
  let redis: RedisServer
  let env: Record<string, string>
  let controlPlane: KeygateProcess
  /** A verifier beside it: v2's keys.verifyKey checks root keys there, from what the command line writes. */
  let verifier: KeygateProcess
  const keysSeen: string[] = [BOOTSTRAP]
  /** Every byte the commands wrote, to check no key reached a place it should not. */
  const stderrs: string[] = []
  const listings: string[] = []

  beforeAll(async () => {
    redis = await startRedisServer()
    env = { REDIS_URL: redis.url }
    const processEnv = { ...env, KEYGATE_ROOT_KEY: BOOTSTRAP, LOG_LEVEL: 'warn' }
    // Side by side (each needs only Redis), each kept as soon as it is up, for afterAll to stop.
    await Promise.all([
      startKeygate(['control-plane'], processEnv).then((started) => (controlPlane = started)),
      startKeygate(['verifier'], processEnv).then((started) => (verifier = started)),
    ])
  })
  afterAll(async () => {
    await verifier?.stop()
    await controlPlane?.stop()
    await redis?.stop()
  })

  const run = async (args: string[], code = 0) => {
    const result = await rootKey(env, args, code)
    stderrs.push(result.stderr)
    return result
  }
  const listJson = async () => {
    const { stdout } = await run(['list', '--json'])
    listings.push(stdout)
    return JSON.parse(stdout) as Record<string, unknown>[]
  }

  it('creates a root key: the key alone on stdout, working at once; list --json shows it, never the key', async () => {
    const created = await run(['create', '--permissions', 'rootkey.*.manage,api.*.read_key', '--name', 'ops'])
    const key = keyOf(created.stdout)
    keysSeen.push(key)
    const id = /Created root key (root_\w+)/.exec(created.stderr)?.[1]
    expect(id).toBeDefined()
    expect(await statusAs(controlPlane, key)).toBe('200')
    await onVerifier(verifier, key, 200)
    const listed = await listJson()
    expect(listed).toHaveLength(1)
    expect(listed[0]).toEqual({
      id,
      name: 'ops',
      start: key.slice(0, 11),
      permissions: ['api.*.read_key', 'rootkey.*.manage'],
      createdAt: expect.any(Number),
      // The call above recorded it (the control plane writes it off the request's path).
      lastUsedAt: expect.any(Number),
    })
    expect(Object.keys(listed[0]!)).toEqual(['id', 'name', 'start', 'permissions', 'createdAt', 'lastUsedAt'])
    const table = await run(['list'])
    listings.push(table.stdout)
    expect(table.stdout).toMatch(/^ID\s+NAME\s+START\s+PERMISSIONS\s+CREATED\s+LAST USED\n/)
    expect(table.stdout).toContain(`${id}  ops`)
    expect(table.stderr).toContain('the bootstrap root key (KEYGATE_ROOT_KEY) is enabled')
  })

  it('rolls a root key: a new one with the same name and permissions on stdout; the old one refused at once', async () => {
    const [before] = await listJson()
    const oldKey = keysSeen[1]!
    const rolled = await run(['roll', String(before!.id)])
    const key = keyOf(rolled.stdout)
    keysSeen.push(key)
    expect(await statusAs(controlPlane, oldKey)).toBe(REFUSED)
    expect(await statusAs(controlPlane, key)).toBe('200')
    await onVerifier(verifier, oldKey, 401)
    await onVerifier(verifier, key, 200)
    const [after] = await listJson()
    expect(after).toMatchObject({ name: 'ops', permissions: before!.permissions, lastUsedAt: expect.any(Number) })
    expect(after!.id).not.toBe(before!.id)
  })

  it('revokes a root key: the control plane refuses it at its next call, as it refuses an unknown key', async () => {
    const [current] = await listJson()
    const key = keysSeen[2]!
    const revoked = await run(['revoke', String(current!.id)])
    expect(revoked.stdout).toBe('')
    expect(revoked.stderr).toContain(`Revoked root key ${String(current!.id)} (ops)`)
    expect(await statusAs(controlPlane, key)).toBe(REFUSED)
    await onVerifier(verifier, key, 401)
    expect(await listJson()).toEqual([])
  })

  it('exits 1 with a clear message for an unknown id, and 2 for bad usage', async () => {
    // Side by side: none of them writes anything.
    const [unknown, bootstrap, noId, twoIds, badPermission, badFlag, badCommand] = await Promise.all([
      run(['revoke', 'root_NoSuchRootKey'], 1),
      run(['roll', 'root_bootstrap'], 1),
      run(['revoke'], 2),
      run(['revoke', 'root_a', 'root_b'], 2),
      run(['create', '--permissions', 'api.x.fly'], 2),
      run(['list', '--json', '--bogus'], 2),
      runKeygate(['root-key', 'frobnicate'], env),
    ])
    expect(unknown.stderr).toContain('root key root_NoSuchRootKey not found')
    expect(bootstrap.stderr).toContain('keygate root-key bootstrap disable')
    expect(noId.stderr).toContain('<rootKeyId> is required')
    expect(twoIds.stderr).toContain('unexpected argument "root_b"')
    expect(badPermission.stderr).toContain('--permissions')
    expect(badFlag.stderr).toContain('--bogus')
    expect(badCommand.code).toBe(2)
  })

  it('turns the bootstrap root key off (once a stored root key has *) and on again, for the running control plane', async () => {
    expect((await run(['bootstrap', 'disable'], 1)).stderr).toContain("no stored root key has '*'")
    expect(await statusAs(controlPlane, BOOTSTRAP)).toBe('200')
    const admin = keyOf((await run(['create', '--permissions', '*', '--name', 'admin'])).stdout)
    keysSeen.push(admin)
    expect(await verifierStatusAs(verifier, BOOTSTRAP)).toBe(200)
    await run(['bootstrap', 'disable'])
    expect(await statusAs(controlPlane, BOOTSTRAP)).toBe(REFUSED)
    await onVerifier(verifier, BOOTSTRAP, 401)
    expect(await statusAs(controlPlane, admin)).toBe('200')
    expect((await run(['list'])).stderr).toContain('the bootstrap root key (KEYGATE_ROOT_KEY) is disabled')
    await run(['bootstrap', 'enable'])
    expect(await statusAs(controlPlane, BOOTSTRAP)).toBe('200')
    await onVerifier(verifier, BOOTSTRAP, 200)
  })

  it('audits every change it made, as `cli`, and never wrote a key anywhere but the stdout of create and roll', async () => {
    const [admin] = await listJson()
    const response = await fetch(`${controlPlane.url}/v1/audit.list`, {
      headers: { authorization: `Bearer ${BOOTSTRAP}` },
    })
    const entries = ((await response.json()) as { entries: { action: string; rootKeyId: string }[] }).entries
    expect(entries.filter((entry) => entry.rootKeyId === 'cli').map((entry) => entry.action)).toEqual([
      'rootKeys.enableBootstrapRootKey',
      'rootKeys.disableBootstrapRootKey',
      'rootKeys.createRootKey',
      'rootKeys.revokeRootKey',
      'rootKeys.rollRootKey',
      'rootKeys.createRootKey',
    ])
    expect(admin).toMatchObject({ name: 'admin' })
    const elsewhere = [...stderrs, ...listings, JSON.stringify(entries), controlPlane.output(), verifier.output()].join(
      '\n',
    )
    for (const key of keysSeen) expect(elsewhere).not.toContain(key)
    expect(keysSeen.slice(1).every((key) => KEY.test(key))).toBe(true)
  })
})

describe('keygate root-key through Sentinel and on a Cluster', () => {
  const stoppable = stopAfterAll()

  it('creates and lists root keys behind Redis Sentinel (REDIS_SENTINELS)', async () => {
    const master = await startRedisServer()
    stoppable.push(master)
    const sentinel = await startSentinel('kgcli', master.port)
    stoppable.push(sentinel)
    // REDIS_URL names no server: only the sentinel can lead the command to the master.
    const sentinelEnv = {
      REDIS_URL: 'redis://127.0.0.1:1',
      REDIS_SENTINELS: `127.0.0.1:${sentinel.port}`,
      REDIS_SENTINEL_NAME: 'kgcli',
      // A master without replicas: behind Sentinel a write waits for one by default, and would never be acknowledged.
      REDIS_WAIT_REPLICAS: '0',
    }
    const { REDIS_WAIT_REPLICAS: _off, ...byDefault } = sentinelEnv
    const unconfirmed = await rootKey(byDefault, ['create', '--permissions', '*', '--name', 'unconfirmed'], 1)
    expect(unconfirmed.stderr).toMatch(/reached 0 of 1 replicas/)
    const key = keyOf((await rootKey(sentinelEnv, ['create', '--permissions', '*', '--name', 'via sentinel'])).stdout)
    const listed = JSON.parse((await rootKey(sentinelEnv, ['list', '--json'])).stdout)
    // The unconfirmed create may have been applied (its outcome is unknown): only the confirmed one is looked for.
    expect(listed.filter((k: { name?: string }) => k.name === 'via sentinel')).toMatchObject([
      { name: 'via sentinel', start: key.slice(0, 11) },
    ])
    // The master the sentinel names holds it (and the unconfirmed one: WAIT confirms a write, never undoes it).
    expect(await master.admin.hlen('kg:{root}:keys')).toBe(2)
  }, 60_000)

  it('creates, lists and revokes root keys on a 3-master Cluster (REDIS_CLUSTER_NODES), honoured by the control plane', async () => {
    const stopped = stoppable.stopped
    const nodes = await startRedisCluster(stopped)
    const env = {
      REDIS_URL: 'redis://127.0.0.1:1',
      REDIS_CLUSTER_NODES: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    }
    const key = keyOf((await rootKey(env, ['create', '--permissions', '*', '--name', 'on the cluster'])).stdout)
    // Side by side: each needs only the cluster.
    const [controlPlane, verifier] = await Promise.all([
      stopped(startKeygate(['control-plane'], { ...env, LOG_LEVEL: 'warn' })),
      stopped(startKeygate(['verifier'], { ...env, LOG_LEVEL: 'warn' })),
    ])
    expect(await statusAs(controlPlane, key)).toBe('200')
    await onVerifier(verifier, key, 200)
    const [listed] = JSON.parse((await rootKey(env, ['list', '--json'])).stdout)
    expect(listed).toMatchObject({ name: 'on the cluster' })
    await rootKey(env, ['revoke', listed.id])
    expect(await statusAs(controlPlane, key)).toBe(REFUSED)
    await onVerifier(verifier, key, 401)
  }, 60_000)
})
