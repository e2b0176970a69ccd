import { describe, expect, it } from 'vitest'
import {
  commandOf,
  ConfigError,
  controlPlaneConfig,
  devConfig,
  rootKeyBootstrapConfig,
  rootKeyCreateConfig,
  rootKeyIdConfig,
  rootKeyListConfig,
  specs,
  verifierConfig,
} from '../../shared/config/config.js'
import { defaultOf, parseOptions } from '../../shared/config/option-spec.js'

describe('configuration', () => {
  it('has defaults for every server option', () => {
    expect(verifierConfig([], {})).toMatchObject({
      port: 7071,
      host: '0.0.0.0',
      redisUrl: 'redis://127.0.0.1:6379',
      logLevel: 'info',
      bodyLimitBytes: 1_048_576,
    })
    expect(controlPlaneConfig([], {})).toMatchObject({ port: 7070, rootKey: undefined })
    expect(devConfig([], {})).toMatchObject({ port: 7070, host: '127.0.0.1' })
  })

  it('reads the environment, and flags win over it', () => {
    const env = { PORT: '8000', REDIS_URL: 'redis://redis:6379', LOG_LEVEL: 'warn' }
    expect(verifierConfig([], env)).toMatchObject({ port: 8000, redisUrl: 'redis://redis:6379', logLevel: 'warn' })
    expect(verifierConfig(['--port', '9000', '--redis=redis://other:1'], env)).toMatchObject({
      port: 9000,
      redisUrl: 'redis://other:1',
    })
  })

  it('lists every problem at once', () => {
    let error: unknown
    try {
      controlPlaneConfig(['--port', '70000', '--bogus', 'x'], {
        REDIS_URL: 'http://x',
        KEYGATE_ROOT_KEY: 'short',
        LOG_LEVEL: 'loud',
      })
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(ConfigError)
    const problems = (error as ConfigError).problems
    expect(problems.join('\n')).toMatch(/--bogus/)
    expect(problems.join('\n')).toMatch(/REDIS_URL: must be a redis/)
    expect(problems.join('\n')).toMatch(/KEYGATE_ROOT_KEY: must be at least 16/)
    expect(problems.join('\n')).toMatch(/LOG_LEVEL: must be one of/)
  })

  it('reads CLICKHOUSE_URL and CLICKHOUSE_CLUSTER, and refuses what would name another database or none, unrepeated', () => {
    expect(controlPlaneConfig([], {}).clickhouse).toBeUndefined()
    const url = 'http://keygate:s3cret-pw@clickhouse:8123/keygate'
    expect(controlPlaneConfig([], { CLICKHOUSE_URL: url, CLICKHOUSE_CLUSTER: 'main' }).clickhouse).toEqual({
      url,
      cluster: 'main',
    })
    expect(controlPlaneConfig([], { CLICKHOUSE_URL: 'http://clickhouse:8123' }).clickhouse?.url).toBe(
      'http://clickhouse:8123',
    )
    for (const [env, problem] of [
      [{ CLICKHOUSE_URL: 'redis://keygate:s3cret-pw@clickhouse:8123/keygate' }, /must be an http\(s\) URL/],
      [{ CLICKHOUSE_URL: 'http://keygate:s3cret-pw@clickhouse:8123/keygate/' }, /one name such as \/keygate/],
      [{ CLICKHOUSE_URL: 'http://keygate:s3cret-pw@clickhouse:8123/a/b' }, /one name such as \/keygate/],
      [{ CLICKHOUSE_CLUSTER: 'main' }, /needs CLICKHOUSE_URL/],
    ] as const) {
      let error: unknown
      try {
        controlPlaneConfig([], env)
      } catch (err) {
        error = err
      }
      expect(error).toBeInstanceOf(ConfigError)
      const problems = (error as ConfigError).problems.join('\n')
      expect(problems).toMatch(problem)
      expect(problems).not.toContain('s3cret-pw')
    }
  })

  it('links error docs to a path on the answering server by default, or to the configured base', () => {
    expect(verifierConfig([], {}).docsBaseUrl).toBe('/docs')
    expect(controlPlaneConfig([], { DOCS_BASE_URL: 'https://keygate.example.com/docs/' }).docsBaseUrl).toBe(
      'https://keygate.example.com/docs',
    )
    expect(devConfig(['--docs-url', '/keygate/docs'], {}).docsBaseUrl).toBe('/keygate/docs')
    for (const bad of ['keygate.example.com/docs', '//keygate.example.com/docs', 'ftp://x/docs', '/docs?x=1']) {
      expect(() => verifierConfig([], { DOCS_BASE_URL: bad }), bad).toThrow(
        /DOCS_BASE_URL: must be a path such as \/docs or an http\(s\) URL/,
      )
    }
  })

  it('returns frozen objects', () => {
    expect(Object.isFrozen(verifierConfig([], {}))).toBe(true)
  })

  it('checks root-key permissions', () => {
    expect(rootKeyCreateConfig(['--permissions', '*'], {}).permissions).toEqual(['*'])
    expect(rootKeyCreateConfig(['--permissions', 'api.*.read_key, api.api_x.update_key'], {}).permissions).toEqual([
      'api.*.read_key',
      'api.api_x.update_key',
    ])
    expect(() => rootKeyCreateConfig(['--permissions', 'api.x.fly'], {})).toThrow(/not '\*' or <resource>/)
    // Every action Unkey v2's root keys name (its pkg/rbac), written as Unkey's dashboard writes them.
    const v2 = [
      'api.*.verify_key',
      'api.*.encrypt_key',
      'api.*.decrypt_key',
      'ratelimit.*.limit',
      'ratelimit.*.list_overrides',
      'ratelimit.rlns_1.set_override',
      'identity.*.create_identity',
      'rbac.*.add_permission_to_role',
    ]
    expect(rootKeyCreateConfig(['--permissions', v2.join(',')], {}).permissions).toEqual(v2)
  })

  it('lists the actions when a root-key permission is malformed, and the one probably meant', () => {
    const problems = (permissions: string) => {
      try {
        rootKeyCreateConfig(['--permissions', permissions], {})
        return []
      } catch (err) {
        return (err as ConfigError).problems
      }
    }
    const format =
      "'*' or <resource>.<id|*>.<action> (resources: api, rbac, identity, ratelimit, webhook, portal) or rootkey.*.manage"
    const actions =
      'actions of api: create_api, read_api, update_api, delete_api, create_key, read_key, update_key, delete_key, verify_key, read_analytics, encrypt_key, decrypt_key, report_leak or *'
    expect(problems('api.*.create_keys')).toEqual([
      `--permissions: "api.*.create_keys" is not ${format}: "create_keys" is not an action of api (did you mean create_key?); ${actions}`,
    ])
    expect(problems('api.api_1.fly')).toEqual([
      `--permissions: "api.api_1.fly" is not ${format}: "fly" is not an action of api; ${actions}`,
    ])
    expect(problems('rbac.*.create_permissions')).toEqual([
      `--permissions: "rbac.*.create_permissions" is not ${format}: "create_permissions" is not an action of rbac (did you mean create_permission?); actions of rbac: create_permission, read_permission, update_permission, delete_permission, create_role, read_role, update_role, delete_role, add_permission_to_key, remove_permission_from_key, add_role_to_key, remove_role_from_key, add_permission_to_role, remove_permission_from_role or *`,
    ])
    expect(problems('identity.*.read_identity')).toEqual([])
    expect(problems('ratelimit.rl_1.limit')).toEqual([])
    expect(problems('webhook.*.create_endpoint,webhook.whep_1.read_endpoint')).toEqual([])
    expect(problems('webhook.*.read_endpoints')).toEqual([
      `--permissions: "webhook.*.read_endpoints" is not ${format}: "read_endpoints" is not an action of webhook (did you mean read_endpoint?); actions of webhook: create_endpoint, read_endpoint, update_endpoint, delete_endpoint, replay, send_test or *`,
    ])
    expect(problems('read_key')).toEqual([`--permissions: "read_key" is not ${format}`])
    expect(() => rootKeyCreateConfig([], {})).toThrow(/KEYGATE_PERMISSIONS \(--permissions\) is required/)
  })

  it('gives every option a default its own row accepts (the table is checked against itself)', () => {
    const rows = Object.values(specs).flat()
    for (const row of rows) {
      const fallback = defaultOf(row)
      if (fallback === undefined) continue
      const given = parseOptions([row], [], { [row.env]: String(fallback) })
      expect(given.problems, `${row.env}=${fallback}`).toEqual([])
      expect(given.values?.[row.flag as never], row.env).toBe(
        row.kind === 'http-url' ? new URL(String(fallback)).origin : fallback,
      )
    }
  })

  it('takes --any-api as a switch (AUTHORIZE_ANY_API=true|false), never beside --api-id', () => {
    expect(verifierConfig([], {}).gateway).toMatchObject({ apiId: undefined, anyApi: false })
    expect(verifierConfig(['--any-api'], {}).gateway.anyApi).toBe(true)
    expect(verifierConfig([], { AUTHORIZE_ANY_API: 'true' }).gateway.anyApi).toBe(true)
    expect(devConfig(['--any-api'], { AUTHORIZE_ANY_API: 'false' }).gateway.anyApi).toBe(true)
    expect(() => verifierConfig([], { AUTHORIZE_ANY_API: 'yes' })).toThrow(/AUTHORIZE_ANY_API: must be true or false/)
    expect(() => verifierConfig(['--any-api=true'], {})).toThrow(/--any-api/)
    expect(() => verifierConfig(['--any-api', '--api-id', 'api_1'], {})).toThrow(
      /AUTHORIZE_API_ID and AUTHORIZE_ANY_API: give one or the other/,
    )
  })

  it('turns a switch off with --no-<flag>, over its variable, and says so of a switch given a value', () => {
    expect(verifierConfig(['--no-any-api'], { AUTHORIZE_ANY_API: 'true' }).gateway.anyApi).toBe(false)
    // The last of the two wins, as with any flag given twice.
    expect(verifierConfig(['--no-any-api', '--any-api'], {}).gateway.anyApi).toBe(true)
    expect(() => verifierConfig(['--any-api=false'], {})).toThrow(
      '--any-api takes no value: --any-api turns it on, --no-any-api turns it off',
    )
    // Only switches have a --no- form.
    expect(() => verifierConfig(['--no-port'], {})).toThrow(/unknown option --no-port/)
  })

  it('refuses private webhook addresses on the control plane unless told, allows them in dev unless told not to', () => {
    expect(controlPlaneConfig([], {}).webhooks.allowPrivateAddresses).toBe(false)
    expect(controlPlaneConfig([], { WEBHOOK_ALLOW_PRIVATE: 'true' }).webhooks.allowPrivateAddresses).toBe(true)
    expect(controlPlaneConfig(['--webhook-allow-private'], {}).webhooks.allowPrivateAddresses).toBe(true)
    expect(devConfig([], {}).webhooks.allowPrivateAddresses).toBe(true)
    expect(devConfig([], { WEBHOOK_ALLOW_PRIVATE: 'false' }).webhooks.allowPrivateAddresses).toBe(false)
    expect(devConfig(['--no-webhook-allow-private'], {}).webhooks.allowPrivateAddresses).toBe(false)
    expect(
      devConfig(['--no-webhook-allow-private'], { WEBHOOK_ALLOW_PRIVATE: 'true' }).webhooks.allowPrivateAddresses,
    ).toBe(false)
  })

  it('refuses reverse-proxy mode without the api its keys must belong to, unless --any-api says every api', () => {
    const proxy = ['--upstream', 'http://127.0.0.1:3000']
    expect(() => verifierConfig(proxy, {})).toThrow(
      /AUTHORIZE_API_ID \(--api-id\) is required in reverse-proxy mode \(UPSTREAM_URL\)/,
    )
    expect(verifierConfig([...proxy, '--api-id', 'api_1'], {}).gateway.apiId).toBe('api_1')
    expect(verifierConfig(proxy, { AUTHORIZE_ANY_API: 'true' }).gateway.anyApi).toBe(true)
    // Forward-auth alone may take the api per request, from the gateway.
    expect(() => verifierConfig([], {})).not.toThrow()
  })

  it("removes the client's Authorization in reverse-proxy mode unless --proxy-pass-authorization says to pass it", () => {
    const proxy = ['--upstream', 'http://127.0.0.1:3000', '--api-id', 'api_1']
    expect(verifierConfig(proxy, {}).proxy?.passAuthorization).toBe(false)
    expect(verifierConfig([...proxy, '--proxy-pass-authorization'], {}).proxy?.passAuthorization).toBe(true)
    expect(verifierConfig(proxy, { PROXY_PASS_AUTHORIZATION: 'true' }).proxy?.passAuthorization).toBe(true)
    expect(() => verifierConfig(proxy, { PROXY_PASS_AUTHORIZATION: 'yes' })).toThrow(/PROXY_PASS_AUTHORIZATION/)
  })

  it('runs the cross-option rules on what could be read, listing their problems beside the others', () => {
    expect(() => verifierConfig(['--poll-interval', 'x', '--max-staleness', '100'], {})).toThrow(
      /--poll-interval: must be/,
    )
    expect(() => verifierConfig(['--poll-interval', 'x', '--max-staleness', '100'], {})).not.toThrow(/POLL_INTERVAL_MS/)
    const both = () => controlPlaneConfig(['--port', 'x', '--poll-interval', '3000'], { REDIS_SENTINELS: 'nohost' })
    expect(both).toThrow(
      /--port: must be[\s\S]*REDIS_SENTINELS: "nohost" is not host:port[\s\S]*POLL_INTERVAL_MS \(3000\)/,
    )
  })

  it('waits for one replica by default behind Sentinel, for none otherwise, and as told when told', () => {
    const sentinels = { REDIS_SENTINELS: '10.0.0.1:26379' }
    expect(controlPlaneConfig([], sentinels).replication.waitReplicas).toBe(1)
    expect(controlPlaneConfig([], {}).replication.waitReplicas).toBe(0)
    expect(controlPlaneConfig([], { REDIS_CLUSTER_NODES: '10.0.0.1:6379' }).replication.waitReplicas).toBe(0)
    expect(controlPlaneConfig([], { ...sentinels, REDIS_WAIT_REPLICAS: '0' }).replication.waitReplicas).toBe(0)
    expect(controlPlaneConfig([], { REDIS_WAIT_REPLICAS: '2' }).replication.waitReplicas).toBe(2)
    expect(rootKeyIdConfig('root-key revoke', ['root_a'], sentinels).replication.waitReplicas).toBe(1)
  })

  it('refuses a WAIT on a Cluster longer than its connections can wait out', () => {
    const cluster = { REDIS_CLUSTER_NODES: '10.0.0.1:6379', REDIS_WAIT_REPLICAS: '1' }
    expect(controlPlaneConfig([], { ...cluster, REDIS_WAIT_TIMEOUT_MS: '1500' }).replication.timeoutMs).toBe(1_500)
    expect(() => controlPlaneConfig([], { ...cluster, REDIS_WAIT_TIMEOUT_MS: '2500' })).toThrow(
      /REDIS_WAIT_TIMEOUT_MS \(2500\) must be at most 1500 on a Cluster/,
    )
    expect(() => rootKeyIdConfig('root-key revoke', ['root_a'], { ...cluster, REDIS_WAIT_TIMEOUT_MS: '2000' })).toThrow(
      /REDIS_WAIT_TIMEOUT_MS \(2000\) must be at most 1500/,
    )
    // One server and Sentinel wait a WAIT out whatever its length (coalescing-redis.ts); a Cluster that waits for no
    // replica sends none.
    expect(
      controlPlaneConfig([], { REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '5000' }).replication.timeoutMs,
    ).toBe(5_000)
    expect(
      controlPlaneConfig([], { REDIS_CLUSTER_NODES: '10.0.0.1:6379', REDIS_WAIT_TIMEOUT_MS: '5000' }),
    ).toBeDefined()
  })

  it('reads the root-key commands: Redis found as the servers find it, the id argument, the --json switch', () => {
    const revoke = rootKeyIdConfig('root-key revoke', ['root_abc', '--redis-cluster-nodes', '10.0.0.1:6379'], {
      REDIS_WAIT_REPLICAS: '1',
    })
    expect(revoke).toMatchObject({
      rootKeyId: 'root_abc',
      redisTarget: { cluster: [{ host: '10.0.0.1', port: 6379 }] },
      replication: { waitReplicas: 1 },
    })
    expect(rootKeyBootstrapConfig('root-key bootstrap disable', [], { REDIS_SENTINELS: 'a:1' }).redisTarget).toEqual({
      sentinel: { sentinels: [{ host: 'a', port: 1 }], name: 'mymaster' },
    })
    expect(() => rootKeyIdConfig('root-key roll', [], {})).toThrow(/<rootKeyId> is required/)
    expect(() => rootKeyIdConfig('root-key roll', ['root_a', 'root_b'], {})).toThrow(/unexpected argument "root_b"/)
    expect(() => rootKeyListConfig(['root_a'], {})).toThrow(/unexpected argument "root_a"/)
    expect(rootKeyListConfig([], {}).json).toBe(false)
    expect(rootKeyListConfig(['--json'], {}).json).toBe(true)
    expect(rootKeyListConfig([], { KEYGATE_JSON: '1' }).json).toBe(true)
    expect(() => rootKeyListConfig([], { KEYGATE_JSON: 'yes' })).toThrow(/KEYGATE_JSON: must be true or false/)
    expect(rootKeyCreateConfig(['--permissions', 'rootkey.*.manage'], {}).permissions).toEqual(['rootkey.*.manage'])
    expect(() => rootKeyCreateConfig(['--permissions', 'rootkey.x.manage'], {})).toThrow(/--permissions/)
  })

  it('reads which address allow-lists check, for every server, and what a forwarded address needs', () => {
    for (const config of [verifierConfig, controlPlaneConfig, devConfig])
      expect(config([], {}).clientAddress).toEqual({ mode: 'socket', trustedProxies: [] })
    expect(
      verifierConfig([], { CLIENT_ADDRESS: 'forwarded', TRUSTED_PROXIES: '127.0.0.1, 10.1.2.3/8,::1' }).clientAddress,
    ).toEqual({ mode: 'forwarded', trustedProxies: ['127.0.0.1/32', '10.0.0.0/8', '::1/128'] })
    expect(
      controlPlaneConfig(['--client-address', 'forwarded', '--trusted-proxies', '192.0.2.0/24'], {}).clientAddress,
    ).toEqual({ mode: 'forwarded', trustedProxies: ['192.0.2.0/24'] })
    for (const config of [verifierConfig, controlPlaneConfig, devConfig]) {
      expect(() => config([], { CLIENT_ADDRESS: 'forwarded' })).toThrow(
        /TRUSTED_PROXIES \(--trusted-proxies\) is required/,
      )
      expect(() => config([], { CLIENT_ADDRESS: 'forwarded', TRUSTED_PROXIES: ' , ' })).toThrow(/is required/)
      expect(() => config([], { TRUSTED_PROXIES: '127.0.0.1' })).toThrow(/read only with CLIENT_ADDRESS=forwarded/)
      expect(() => config([], { CLIENT_ADDRESS: 'forwarded', TRUSTED_PROXIES: '127.0.0.1,proxy' })).toThrow(
        /TRUSTED_PROXIES: "proxy" is not an IP address or CIDR range/,
      )
      expect(() => config([], { CLIENT_ADDRESS: 'xff' })).toThrow(/CLIENT_ADDRESS: must be one of socket, forwarded/)
    }
  })

  it('finds the command a command line names, however many words it has', () => {
    expect(commandOf(['root-key', 'bootstrap', 'disable', '--redis', 'redis://x'])).toEqual({
      command: 'root-key bootstrap disable',
      rest: ['--redis', 'redis://x'],
    })
    expect(commandOf(['root-key', 'revoke', 'root_a'])).toEqual({ command: 'root-key revoke', rest: ['root_a'] })
    expect(commandOf(['verifier'])).toEqual({ command: 'verifier', rest: [] })
    expect(commandOf(['root-key'])).toBeUndefined()
    expect(commandOf(['root-key', 'bootstrap'])).toBeUndefined()
  })
})
