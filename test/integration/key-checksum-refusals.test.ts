import bs58 from 'bs58'
import { randomBytes } from 'node:crypto'
import { connect } from 'node:net'
import { pino } from 'pino'
import { Registry } from 'prom-client'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { checksumOf } from '../../shared/keys/key-checksum.js'
import { hashKey, generateKey } from '../../shared/keys/key-material.js'
import { createReverseProxy, type ReverseProxy } from '../../verifier/proxy-server.js'
import {
  openBackend,
  startTestControlPlane,
  startTestVerifier,
  TEST_ROOT_KEY,
  type Backend,
  type TestServer,
} from '../support/apps.js'
import { startEchoUpstream, type EchoUpstream } from '../support/echo-upstream.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { metric, verdict } from '../support/server-probes.js'
import { waitFor } from '../support/wait-for.js'
import { newApi, newKey } from './contract-records.js'

const b58 = (bytes: number) => bs58.encode(randomBytes(bytes))
/** A key of the checksummed shape whose checksum is certainly wrong. */
const wrongChecksum = (head = 'sk_') => {
  const body = `${head}${b58(16)}`
  const right = checksumOf(body)
  return `${body}_${right.startsWith('1') ? `2${right.slice(1)}` : `1${right.slice(1)}`}`
}
interface Answer {
  status: number
  body: unknown
  headers: Record<string, unknown>
}

/** An answer as any two answers to the same request are alike: without its request id and date. */
function comparable(status: number, headers: Record<string, unknown>, text: string): Answer {
  const { date: _date, 'x-request-id': _id, ...rest } = headers
  const body: unknown =
    text === '' ? '' : JSON.parse(text, (name, value: unknown) => (name === 'requestId' ? 'x' : value))
  return { status, body, headers: rest }
}

/**
 * A verifier alone on a Redis of its own, polling never (so nothing in the background sends a command): what a
 * verification costs Redis is then every command Redis counts, less the INFO that counts them.
 */
describe('keys with a wrong checksum', () => {
  let redis: RedisServer
  let backend: Backend
  let verifier: TestServer
  let upstream: EchoUpstream
  let proxy: ReverseProxy
  const urls = { verifier: '', proxy: '' }
  const keys = { checksummed: '', legacy: '' }

  beforeAll(async () => {
    redis = await startRedisServer()
    backend = await openBackend(redis.url)
    const api = await newApi(backend.store)
    // One key made now, and one of the format before checksums (as Unkey made them, or imported by hash).
    keys.checksummed = generateKey('sk').key
    keys.legacy = `sk_${b58(16)}`
    for (const key of Object.values(keys)) await backend.store.keys.createKey(newKey(api.id, { hash: hashKey(key) }))
    verifier = await startTestVerifier({
      backend,
      sync: { pollIntervalMs: 3_600_000, maxStalenessMs: 3_600_000 },
      gateway: { anyApi: true },
      // Nor does it hand its analytics rows over while a test counts commands.
      recording: { flushMs: 3_600_000 },
    })
    urls.verifier = await verifier.app.listen({ port: 0, host: '127.0.0.1' })
    upstream = await startEchoUpstream()
    proxy = createReverseProxy({
      verifier: verifier.verifier,
      policy: { keyHeader: 'x-api-key', cost: 1, apiId: api.id },
      log: pino({ level: 'silent' }),
      registry: new Registry(),
      options: { upstreamUrl: upstream.url, connections: 2, timeoutMs: 5_000, docsBaseUrl: '/docs' },
    })
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve))
    const address = proxy.server.address()
    urls.proxy = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    await waitFor(
      async () =>
        (await metric(verifier, 'keygate_verify_filter_builds_total')) >= 1 &&
        (await metric(verifier, 'keygate_verify_filter_unsure_shards')) === 0,
      'the filter of known hashes to be built',
    )
  })
  afterAll(async () => {
    await proxy.close()
    await upstream.stop()
    await verifier.close()
    await backend.close()
    await redis.stop()
  })

  /** Commands Redis has run, but the change feed's PING: a heartbeat every second, whatever the verifier answers. */
  const redisCommands = async () =>
    [...(await redis.admin.info('commandstats')).matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)]
      .filter(([, name]) => name !== 'ping')
      .reduce((sum, [, , n]) => sum + Number(n), 0)

  const JSON_HEADERS = { 'content-type': 'application/json' }
  const V2_HEADERS = { ...JSON_HEADERS, authorization: `Bearer ${TEST_ROOT_KEY}` }
  const injected = async (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object) => {
    const response = await verifier.app.inject({ method, url, headers, ...(payload ? { payload } : {}) })
    return comparable(response.statusCode, response.headers, response.body)
  }
  const overHttp = async (method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: object) => {
    const response = await request(url, { method, headers, ...(body ? { body: JSON.stringify(body) } : {}) })
    return comparable(response.statusCode, response.headers, await response.body.text())
  }
  /** Every way a verifier is asked about a key: Fastify's routes, the fast paths ahead of them, the proxy. */
  const paths: Record<string, (key: string) => Promise<Answer>> = {
    'v1 verifyKey': (key) => injected('POST', '/v1/keys.verifyKey', JSON_HEADERS, { key }),
    'v1 verifyKey, fast path': (key) => overHttp('POST', `${urls.verifier}/v1/keys.verifyKey`, JSON_HEADERS, { key }),
    'v2 verifyKey': (key) => injected('POST', '/v2/keys.verifyKey', V2_HEADERS, { key }),
    'v2 verifyKey, fast path': (key) => overHttp('POST', `${urls.verifier}/v2/keys.verifyKey`, V2_HEADERS, { key }),
    '/v1/authorize': (key) => injected('GET', '/v1/authorize', { 'x-api-key': key }),
    '/v1/authorize, fast path': (key) => overHttp('GET', `${urls.verifier}/v1/authorize`, { 'x-api-key': key }),
    'the proxy': (key) => overHttp('GET', `${urls.proxy}/orders`, { 'x-api-key': key }),
  }

  it('verifies checksummed keys and keys of the format before checksums alike', async () => {
    expect(await verdict(verifier, keys.checksummed)).toMatchObject({ valid: true })
    expect(await verdict(verifier, keys.legacy)).toMatchObject({ valid: true })
  })

  it('refuses a flood of guesses of the right shape NOT_FOUND with zero Redis commands', async () => {
    const missesBefore = await metric(verifier, 'keygate_verify_cache_misses_total')
    const refusedBefore = await metric(verifier, 'keygate_verify_checksum_refusals_total')
    const before = await redisCommands()
    const FLOOD = 2_000
    const guesses = Array.from({ length: FLOOD }, () => `sk_${b58(16)}_${b58(4).slice(0, 6).padEnd(6, '1')}`)
    const answers = await Promise.all(guesses.map((key) => verdict(verifier, key)))
    expect(answers.filter((answer) => answer.code !== 'NOT_FOUND')).toEqual([])
    // The INFO that read `before` is the one command since.
    expect((await redisCommands()) - before).toBe(1)
    expect(await metric(verifier, 'keygate_verify_checksum_refusals_total')).toBe(refusedBefore + FLOOD)
    expect(await metric(verifier, 'keygate_verify_cache_misses_total')).toBe(missesBefore)
  })

  it.each(Object.keys(paths))('%s: refuses a wrong checksum with zero Redis commands, counted', async (path) => {
    const ask = paths[path]!
    // v2 reads the root key's state once, then holds it: what a guessed key costs is counted after that.
    await ask(wrongChecksum())
    const refusedBefore = await metric(verifier, 'keygate_verify_checksum_refusals_total')
    const before = await redisCommands()
    const BATCH = 50
    const answers = await Promise.all(Array.from({ length: BATCH }, () => ask(wrongChecksum())))
    expect((await redisCommands()) - before).toBe(1)
    expect(await metric(verifier, 'keygate_verify_checksum_refusals_total')).toBe(refusedBefore + BATCH)
    for (const answer of answers) expect(answer).toEqual(answers[0])
    expect(upstream.seen).toEqual([])
  })

  // What a caller sees tells a wrong checksum from an unknown key in nothing but time (a checksum is public: anyone
  // can compute it, so the refusal tells a guesser nothing new).
  it.each(Object.keys(paths))('%s: answers a wrong checksum exactly as a key that does not exist', async (path) => {
    const ask = paths[path]!
    const unknown = [await ask(`sk_${b58(16)}`), await ask(generateKey('sk').key)]
    const refused = await ask(wrongChecksum())
    for (const answer of unknown) expect(refused).toEqual(answer)
    // …and a wrong checksum on a key that exists is a key that does not.
    expect(await ask(`${keys.checksummed.slice(0, -1)}${keys.checksummed.endsWith('2') ? '3' : '2'}`)).toEqual(refused)
  })

  // The count above can see commands: unknown keys without a checksum cost a revision poll per batch.
  it('counts the commands unknown keys of the older format do cost', async () => {
    const before = await redisCommands()
    await Promise.all(Array.from({ length: 50 }, () => verdict(verifier, `sk_${b58(16)}`)))
    expect((await redisCommands()) - before).toBeGreaterThan(1)
  })
})

/**
 * keys.whoami finds a key by its plaintext on the control plane: a wrong checksum is not looked up there either. The
 * control plane's background work sends commands of its own, so what is watched is every command naming a key's hash.
 * Root keys carry no checksum and are never judged by their shape: this one is given the checksummed shape with a
 * wrong checksum, and still authenticates, as bootstrap key and as a stored one.
 */
describe('keys.whoami with a wrong checksum, and root keys of any shape', () => {
  let redis: RedisServer
  let controlPlane: TestServer
  const rootKeys = { bootstrap: wrongChecksum('kgroot_'), stored: wrongChecksum('kgroot_') }
  let known: string

  beforeAll(async () => {
    redis = await startRedisServer()
    controlPlane = await startTestControlPlane({ redisUrl: redis.url, bootstrapRootKey: rootKeys.bootstrap })
    await controlPlane.backend.store.rootKeys.createRootKey({
      id: newId('root'),
      hash: hashKey(rootKeys.stored),
      permissions: ['api.*.read_key', 'api.*.verify_key'],
      createdAt: Date.now(),
    })
    const api = await newApi(controlPlane.backend.store)
    known = generateKey('sk').key
    await controlPlane.backend.store.keys.createKey(newKey(api.id, { hash: hashKey(known) }))
  })
  afterAll(async () => {
    await controlPlane.close()
    await redis.stop()
  })

  const ask = async (url: string, key: string, rootKey = rootKeys.bootstrap) => {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${rootKey}` }
    const response = await controlPlane.app.inject({ method: 'POST', url, headers, payload: { key } })
    return comparable(response.statusCode, response.headers, response.body)
  }
  /**
   * Every command Redis runs while `work` does, one MONITOR line each, read off a socket of its own (a client library's
   * connection in monitor mode mistakes the lines for replies when its own commands are queued).
   */
  const commandsDuring = async (work: () => Promise<unknown>): Promise<string[]> => {
    const socket = connect(redis.port, '127.0.0.1')
    let text = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (text += chunk))
    socket.write('MONITOR\r\n')
    await waitFor(() => text.startsWith('+OK'), 'MONITOR to start')
    await work()
    // Redis shows a monitor every command in the order it runs them: once this one is seen, so is all of `work`.
    const marker = `done-${b58(8)}`
    await redis.admin.echo(marker)
    await waitFor(() => text.includes(marker), 'the monitor to see the marker')
    socket.destroy()
    return text.split('\r\n')
  }

  it.each(['/v1/keys.whoami', '/v2/keys.whoami'])(
    '%s: refuses a wrong checksum as an unknown key, unread',
    async (url) => {
      const guesses = Array.from({ length: 20 }, () => wrongChecksum())
      let refused: Answer[] = []
      const seen = await commandsDuring(async () => {
        refused = await Promise.all(guesses.map((key) => ask(url, key)))
      })
      expect(seen.length).toBeGreaterThan(0)
      expect(seen.filter((command) => guesses.some((key) => command.includes(hashKey(key))))).toEqual([])
      expect(refused[0]!.status).toBe(404)
      for (const answer of refused) expect(answer).toEqual(refused[0])
      // An unknown key of the older format is read (the watch above can see it), and answered alike.
      const legacy = `sk_${b58(16)}`
      let unknown: Answer | undefined
      const read = await commandsDuring(async () => {
        unknown = await ask(url, legacy)
      })
      expect(read.filter((command) => command.includes(hashKey(legacy)))).not.toEqual([])
      expect(unknown).toEqual(refused[0])
      expect(await ask(url, generateKey('sk').key)).toEqual(refused[0])
    },
  )

  it('authenticates root keys of the checksummed shape, whatever their checksum: they carry none', async () => {
    for (const rootKey of [rootKeys.bootstrap, rootKeys.stored]) {
      expect((await ask('/v1/keys.whoami', known, rootKey)).status).toBe(200)
      expect((await ask('/v2/keys.whoami', known, rootKey)).status).toBe(200)
      expect((await ask('/v2/keys.verifyKey', known, rootKey)).body).toMatchObject({ data: { valid: true } })
    }
  })
})
