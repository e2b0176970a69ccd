import { createHash } from 'node:crypto'
import bs58 from 'bs58'
import { randomBytes } from 'node:crypto'
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import { newId } from '../../shared/ids.js'
import { redisKeys } from '../../shared/store/redis/redis-keys.js'
import { generateRootKey, hashKey } from '../../shared/keys/key-material.js'
import {
  capturedLogger,
  ManualClock,
  openBackend,
  startTestControlPlane,
  TEST_ROOT_KEY,
  type Backend,
  type TestServer,
} from '../support/apps.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'
import { DEFAULT_REPORT_READ_LIMITS, type ReportReadLimits } from '../../control-plane/leaks/unverified-report-reads.js'
import { overriding, type PartOverrides } from '../support/store-overrides.js'
import { metric } from '../support/server-probes.js'
import {
  newReportSigner,
  signedHeaders,
  startKeySetServer,
  type KeySetServer,
  type ReportSigner,
} from '../support/secret-scanning.js'

const redis = useRedisServer()
const REPORT = '/v1/secret-scanning/github'
const headers = { authorization: `Bearer ${TEST_ROOT_KEY}`, 'content-type': 'application/json' }
const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * GitHub's secret-scanning reports and keys.reportLeak on a control plane on Redis, the signing keys served by a local
 * stand-in for GitHub's key endpoint. Each refusal is checked to change nothing.
 */
describe('leak reports', () => {
  let backend: Backend
  let controlPlane: TestServer
  let keySet: KeySetServer
  let signer: ReportSigner
  // Every key made here, and what the servers logged: no log line may hold one.
  const made: string[] = []
  const logged = capturedLogger()

  beforeAll(async () => {
    signer = newReportSigner('github-key-1')
    keySet = await startKeySetServer([signer])
    backend = await openBackend(redis.url)
    controlPlane = await startTestControlPlane({ backend, secretScanningKeysUrl: keySet.url, log: logged.log })
  })
  afterAll(async () => {
    await controlPlane.close()
    await backend.close()
    await keySet.close()
  })

  const call = async (path: string, payload: object, auth = headers) => {
    const response = await controlPlane.app.inject({ method: 'POST', url: path, headers: auth, payload })
    return { status: response.statusCode, body: response.json() }
  }
  const post = async (operation: string, payload: object) => (await call(`/v1/${operation}`, payload)).body
  const report = async (body: string, sent: Record<string, string>) => {
    const response = await controlPlane.app.inject({ method: 'POST', url: REPORT, headers: sent, payload: body })
    return { status: response.statusCode, body: response.json() }
  }
  const newKey = async () => {
    const { apiId } = await post('apis.createApi', { name: 'leaky' })
    const { keyId, key } = await post('keys.createKey', { apiId })
    made.push(key)
    return { apiId, keyId, key: key as string }
  }
  const getKey = async (keyId: string) =>
    (await controlPlane.app.inject({ method: 'GET', url: `/v1/keys.getKey?keyId=${keyId}`, headers })).json()
  const found = (token: string) => ({
    token,
    type: 'keygate_api_key',
    url: 'https://github.com/o/r/blob/c/f',
    source: 'content',
  })

  it('disables a reported key, marks where it leaked, audits it, and labels every token', async () => {
    const { apiId, keyId, key } = await newKey()
    const wrongChecksum = `${key.slice(0, -1)}${key.endsWith('1') ? '2' : '1'}`
    const unknown = `sk_${bs58.encode(randomBytes(16))}`
    const body = JSON.stringify([found(key), found(wrongChecksum), found(unknown)])
    const answer = await report(body, signedHeaders(signer, body))
    expect(answer).toEqual({
      status: 200,
      body: [
        { token_hash: sha256Hex(key), token_type: 'keygate_api_key', label: 'true_positive' },
        { token_hash: sha256Hex(wrongChecksum), token_type: 'keygate_api_key', label: 'false_positive' },
        { token_hash: sha256Hex(unknown), token_type: 'keygate_api_key', label: 'false_positive' },
      ],
    })
    const record = await getKey(keyId)
    expect(record.enabled).toBe(false)
    expect(record.leaked).toEqual({
      at: expect.any(Number),
      url: 'https://github.com/o/r/blob/c/f',
      source: 'content',
      reporter: 'github',
      action: 'disable',
    })
    expect((await post('keys.verifyKey', { key })).code).toBe('DISABLED')
    const { entries } = (
      await controlPlane.app.inject({ method: 'GET', url: `/v1/audit.list?keyId=${keyId}`, headers })
    ).json()
    expect(entries[0]).toMatchObject({
      action: 'keys.reportLeak',
      rootKeyId: 'github',
      apiId,
      keyId,
      before: { enabled: true },
      after: { enabled: false, leaked: { reporter: 'github' } },
      context: { reporter: 'github', action: 'disable', source: 'content' },
    })
    expect(JSON.stringify(entries[0])).not.toContain(key)
    expect(await metric(controlPlane, 'keygate_leak_reports_total', { label: 'true_positive' })).toBeGreaterThan(0)
  })

  it("applies the api's leak policy: notify keeps the key verifying, delete deletes it", async () => {
    const keyOf = async (leakPolicy: string) => {
      const { apiId } = await post('apis.createApi', { name: `leaky ${leakPolicy}`, leakPolicy })
      const { keyId, key } = await post('keys.createKey', { apiId })
      return { keyId, key: key as string }
    }
    const notified = await keyOf('notify')
    const deleted = await keyOf('delete')
    const body = JSON.stringify([found(notified.key), found(deleted.key)])
    const answer = await report(body, signedHeaders(signer, body))
    expect(answer.status).toBe(200)
    expect(answer.body.map((token: { label: string }) => token.label)).toEqual(['true_positive', 'true_positive'])
    expect(await getKey(notified.keyId)).toMatchObject({
      enabled: true,
      leaked: { action: 'notify', reporter: 'github' },
    })
    expect((await post('keys.verifyKey', { key: notified.key })).valid).toBe(true)
    const gone = await controlPlane.app.inject({
      method: 'GET',
      url: `/v1/keys.getKey?keyId=${deleted.keyId}`,
      headers,
    })
    expect(gone.statusCode).toBe(404)
    expect((await post('keys.verifyKey', { key: deleted.key })).code).toBe('NOT_FOUND')
    const { entries } = (
      await controlPlane.app.inject({ method: 'GET', url: `/v1/audit.list?keyId=${deleted.keyId}`, headers })
    ).json()
    const leakEntry = entries.find((entry: { action: string }) => entry.action === 'keys.reportLeak')
    expect(leakEntry).toMatchObject({ context: { action: 'delete' }, before: { enabled: true } })
    expect(leakEntry.after).toBeUndefined()
  })

  it('acts once on a key a report lists twice, and labels both alike', async () => {
    const { apiId, keyId, key } = await newKey()
    await post('apis.updateApi', { apiId, leakPolicy: 'delete' })
    const body = JSON.stringify([found(key), { ...found(key), url: 'https://github.com/o/r/blob/c/g' }])
    const answer = await report(body, signedHeaders(signer, body))
    expect(answer.body.map((token: { label: string }) => token.label)).toEqual(['true_positive', 'true_positive'])
    const { entries } = (
      await controlPlane.app.inject({ method: 'GET', url: `/v1/audit.list?keyId=${keyId}`, headers })
    ).json()
    expect(entries.filter((entry: { action: string }) => entry.action === 'keys.reportLeak')).toHaveLength(1)
  })

  it('refuses an unsigned, a tampered, a wrongly signed and an unknown-key report, changing nothing', async () => {
    const { keyId, key } = await newKey()
    const body = JSON.stringify([found(key)])
    const signed = signedHeaders(signer, body)
    const signature = signed['github-public-key-signature']!
    const impostor = newReportSigner('github-key-1')
    const cases: [string, string, Record<string, string>][] = [
      ['unsigned', body, { 'content-type': 'application/json' }],
      ['no signature', body, { ...signed, 'github-public-key-signature': '' }],
      ['tampered', body.replace('content', 'commit'), signed],
      ['another key signed it', body, signedHeaders(impostor, body)],
      ['garbage signature', body, { ...signed, 'github-public-key-signature': 'bm90IGEgc2lnbmF0dXJl' }],
      // Node joins a repeated header with ", ": two signatures, or one with more beside it, are not one.
      ['signature sent twice', body, { ...signed, 'github-public-key-signature': `${signature}, ${signature}` }],
      ['signature and more', body, { ...signed, 'github-public-key-signature': `${signature}, AAAA` }],
      [
        'signature with a space',
        body,
        { ...signed, 'github-public-key-signature': `${signature.slice(0, 8)} ${signature.slice(8)}` },
      ],
      ['unknown key', body, { ...signed, 'github-public-key-identifier': 'no-such-key' }],
    ]
    for (const [name, sent, sentHeaders] of cases) {
      const answer = await report(sent, sentHeaders)
      expect(answer.status, name).toBe(401)
      expect(answer.body.error.code, name).toBe('INVALID_SIGNATURE')
    }
    expect((await getKey(keyId)).enabled).toBe(true)
    expect((await getKey(keyId)).leaked).toBeUndefined()
    expect((await post('keys.verifyKey', { key })).valid).toBe(true)
    expect(await metric(controlPlane, 'keygate_leak_report_refusals_total', { reason: 'unknown_key' })).toBe(1)
    expect(await metric(controlPlane, 'keygate_leak_report_refusals_total', { reason: 'bad_signature' })).toBe(6)
  })

  describe('before its body', () => {
    let port: number
    beforeAll(async () => {
      port = Number(new URL(await controlPlane.app.listen({ port: 0, host: '127.0.0.1' })).port)
    })

    const signedHead = (body: string) =>
      Object.entries(signedHeaders(signer, body))
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('')
    const refusals: [string, string, number, string, string][] = [
      ['unsigned', '', 401, 'INVALID_SIGNATURE', 'unsigned'],
      ['unsigned, chunked', '', 401, 'INVALID_SIGNATURE', 'unsigned'],
      [
        'with empty signature headers',
        'github-public-key-identifier: \r\ngithub-public-key-signature: \r\n',
        401,
        'INVALID_SIGNATURE',
        'unsigned',
      ],
      [
        'naming no known signing key',
        'github-public-key-identifier: nope\r\ngithub-public-key-signature: x\r\n',
        401,
        'INVALID_SIGNATURE',
        'unknown_key',
      ],
      ['larger than a report can be', 'big', 413, 'PAYLOAD_TOO_LARGE', 'malformed'],
    ]
    // A head announcing a megabyte (or chunks) and one byte of it: the answer must come while the rest never does.
    it.each(refusals)(
      'refuses a report %s, so that a slow upload of it holds nothing',
      async (name, sent, status, code, reason) => {
        const before = await metric(controlPlane, 'keygate_leak_report_refusals_total', { reason })
        const headers = sent === 'big' ? signedHead('[]') : sent
        const framing = name.endsWith('chunked')
          ? 'transfer-encoding: chunked\r\n\r\n1\r\n['
          : `content-length: ${sent === 'big' ? 2 * 1024 * 1024 : 1024 * 1024}\r\n\r\n[`
        const request = reportHead(port, `${headers}${framing}`)
        const answer = await request.answer().finally(request.close)
        expect(answer.head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `))
        expect(answer.body.error.code).toBe(code)
        expect(await metric(controlPlane, 'keygate_leak_report_refusals_total', { reason })).toBe(before + 1)
      },
    )
  })

  describe('bodies read before the signature is checked', () => {
    /** A control plane reading report bodies within `limits`, listening; `run` is given its port. */
    const withLimits = async (limits: Partial<ReportReadLimits>, run: (plane: TestServer, port: number) => unknown) => {
      const plane = await startTestControlPlane({
        backend,
        secretScanningKeysUrl: keySet.url,
        leakReportReads: { ...DEFAULT_REPORT_READ_LIMITS, ...limits },
      })
      try {
        await run(plane, Number(new URL(await plane.app.listen({ port: 0, host: '127.0.0.1' })).port))
      } finally {
        await plane.close()
      }
    }
    // A report of a token that is no key: answered 200 `false_positive`, each one a body of its own (no replay).
    const newReport = () => {
      const body = JSON.stringify([found(`sk_${bs58.encode(randomBytes(16))}`)])
      const head = Object.entries(signedHeaders(signer, body))
        .filter(([name]) => name !== 'content-type')
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('')
      return { body, start: `${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 1)}` }
    }
    const reading = (plane: TestServer, count: number) =>
      waitFor(
        async () => (await metric(plane, 'keygate_leak_report_reads_in_flight')) === count,
        `${count} report bodies being read`,
      )

    it('reads so many at once: one more is answered 429 before its body, and each read that ends gives its place back', async () => {
      await withLimits({ concurrent: 2 }, async (plane, port) => {
        const reports = [newReport(), newReport()]
        const slow = reports.map((report) => reportHead(port, report.start))
        await reading(plane, 2)
        const third = reportHead(port, newReport().start)
        const refused = await third.answer().finally(third.close)
        expect(refused.head).toMatch(/^HTTP\/1\.1 429 /)
        expect(refused.head).toMatch(/^retry-after: 1$/im)
        expect(refused.body.error.code).toBe('RATE_LIMITED')
        expect(await metric(plane, 'keygate_leak_report_refusals_total', { reason: 'busy' })).toBe(1)
        // One read ends with its body, the other with its client gone: both places are given back.
        slow[0]!.send(reports[0]!.body.slice(1))
        expect((await slow[0]!.answer()).body[0].label).toBe('false_positive')
        slow[1]!.close()
        await reading(plane, 0)
        const again = newReport()
        const answers = await Promise.all(
          [again, newReport()].map(({ body }) =>
            plane.app.inject({ method: 'POST', url: REPORT, headers: signedHeaders(signer, body), payload: body }),
          ),
        )
        expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200])
      })
    })

    it('answers 408 to a body that has not all come within the deadline, closes its connection and gives its place back', async () => {
      await withLimits({ deadlineMs: 200 }, async (plane, port) => {
        const slow = reportHead(port, newReport().start)
        const answer = await slow.answer()
        expect(answer.head).toMatch(/^HTTP\/1\.1 408 /)
        expect(answer.head).toMatch(/^connection: close$/im)
        expect(answer.body.error.code).toBe('REQUEST_TIMEOUT')
        await slow.closed
        await reading(plane, 0)
        expect(await metric(plane, 'keygate_leak_report_refusals_total', { reason: 'slow' })).toBe(1)
      })
    })
  })

  it('asks the key endpoint again for an unknown identifier, at most once a minute', async () => {
    const before = keySet.hits()
    const body = JSON.stringify([found('sk_nothing')])
    for (const identifier of ['unknown-a', 'unknown-b', 'unknown-c']) {
      expect(
        (await report(body, { ...signedHeaders(signer, body), 'github-public-key-identifier': identifier })).status,
      ).toBe(401)
    }
    // The earlier test's unknown identifier made the last fetch less than a minute ago: none of these fetches.
    expect(keySet.hits()).toBe(before)
  })

  it('refuses a report sent again, even re-signed, and does not act on it twice', async () => {
    const { keyId, key } = await newKey()
    const body = JSON.stringify([found(key)])
    expect((await report(body, signedHeaders(signer, body))).status).toBe(200)
    // The owner re-enables the key; the same report, replayed (with another valid signature of the same body), must
    // not disable it again.
    await post('keys.updateKey', { keyId, enabled: true })
    const replayed = await report(body, signedHeaders(signer, body))
    expect(replayed.status).toBe(409)
    expect(replayed.body.error.code).toBe('CONFLICT')
    expect((await getKey(keyId)).enabled).toBe(true)
    // A new report of the same key (elsewhere) is acted on.
    const again = JSON.stringify([{ ...found(key), url: 'https://github.com/o/r2/blob/c/f' }])
    expect((await report(again, signedHeaders(signer, again))).status).toBe(200)
    expect(await getKey(keyId)).toMatchObject({ enabled: false, leaked: { url: 'https://github.com/o/r2/blob/c/f' } })
  })

  it('answers a signed report that is not a list of tokens 400, and acts on none of it', async () => {
    const { keyId, key } = await newKey()
    for (const body of [
      '{"token": "x"}',
      'not json',
      JSON.stringify([found(key), { type: 'x' }]),
      JSON.stringify([{ ...found(key), url: 7 }]),
    ]) {
      const answer = await report(body, signedHeaders(signer, body))
      expect(answer.status, body).toBe(400)
      expect(answer.body.error.code).toBe('BAD_REQUEST')
    }
    expect((await getKey(keyId)).enabled).toBe(true)
  })

  it('answers 503, not 500, while the key endpoint fails, and acts once it answers', async () => {
    const other = newReportSigner('github-key-2')
    const { keyId, key } = await newKey()
    const body = JSON.stringify([found(key)])
    const down = await startKeySetServer([other])
    down.status = 500
    // The key set's clock: a failed fetch is tried again a minute later, not at once.
    const clock = new ManualClock(Date.now())
    const plane = await startTestControlPlane({ backend, secretScanningKeysUrl: down.url, clock })
    try {
      const send = () =>
        plane.app.inject({ method: 'POST', url: REPORT, headers: signedHeaders(other, body), payload: body })
      const refused = await send()
      expect(refused.statusCode).toBe(503)
      expect(refused.json().error.code).toBe('UNAVAILABLE')
      expect((await getKey(keyId)).enabled).toBe(true)
      down.status = 200
      // Not asked again within the minute: still no answer on GitHub's key, so 503 again, never a 401.
      expect((await send()).statusCode).toBe(503)
      expect(down.hits()).toBe(1)
      clock.advance(60_000)
      const accepted = await send()
      expect(accepted.statusCode).toBe(200)
      expect(accepted.json()[0].label).toBe('true_positive')
      expect((await getKey(keyId)).enabled).toBe(false)
    } finally {
      await plane.close()
      await down.close()
    }
  })

  it('acts on reports arriving together before the keys are fetched, with one fetch', async () => {
    const keys = await startKeySetServer([signer])
    const plane = await startTestControlPlane({ backend, secretScanningKeysUrl: keys.url })
    try {
      const made = await Promise.all([newKey(), newKey()])
      const answers = await Promise.all(
        made.map(({ key }) => {
          const body = JSON.stringify([found(key)])
          return plane.app.inject({ method: 'POST', url: REPORT, headers: signedHeaders(signer, body), payload: body })
        }),
      )
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200])
      for (const { keyId } of made) expect((await getKey(keyId)).enabled).toBe(false)
      expect(keys.hits()).toBe(1)
    } finally {
      await plane.close()
      await keys.close()
    }
  })

  describe('on a store that fails or is watched', () => {
    /** A control plane on the same Redis, some store methods replaced; `run` reports to it. */
    type Send = (body: string) => Promise<{ status: number; body: any }>
    const withStore = async (overrides: PartOverrides, run: (send: Send) => unknown) => {
      const plane = await startTestControlPlane({
        backend: { ...backend, store: overriding(backend.store, overrides) },
        secretScanningKeysUrl: keySet.url,
        log: logged.log,
      })
      try {
        await run(async (body) => {
          const sent = { method: 'POST' as const, url: REPORT, headers: signedHeaders(signer, body), payload: body }
          const answer = await plane.app.inject(sent)
          return { status: answer.statusCode, body: answer.json() }
        })
      } finally {
        await plane.close()
      }
    }
    const outage = () => Promise.reject(new StoreUnavailableError('the store cannot be reached (injected)'))
    const claimLeft = (body: string) =>
      redis.admin.pttl(redisKeys.leakReport(createHash('sha256').update(body).digest('hex')))

    it('forgets a report it could not act on, so that the retry is acted on', async () => {
      const { keyId, key } = await newKey()
      const body = JSON.stringify([found(key)])
      let failing = true
      const updateKey = backend.store.keys.updateKey.bind(backend.store.keys)
      await withStore({ keys: { updateKey: (...args) => (failing ? outage() : updateKey(...args)) } }, async (send) => {
        expect((await send(body)).status).toBe(503)
        expect((await getKey(keyId)).enabled).toBe(true)
        failing = false
        expect((await send(body)).status).toBe(200)
      })
      expect((await getKey(keyId)).enabled).toBe(false)
    })

    it('holds a report it could not act on nor give back for a minute only, one acted on for 30 days', async () => {
      const { key } = await newKey()
      const failed = JSON.stringify([found(key)])
      await withStore({ keys: { updateKey: outage }, leakReports: { releaseReport: outage } }, async (send) => {
        expect((await send(failed)).status).toBe(503)
      })
      // The retry GitHub sends a minute later is acted on (the claim expires on Redis's clock: read, not waited for).
      expect(await claimLeft(failed)).toBeGreaterThan(0)
      expect(await claimLeft(failed)).toBeLessThanOrEqual(60_000)
      const acted = JSON.stringify([{ ...found(key), source: 'commit' }])
      expect((await report(acted, signedHeaders(signer, acted))).status).toBe(200)
      expect(await claimLeft(acted)).toBeGreaterThan(30 * 86_400_000 - 60_000)
    })

    it('calls a key deleted while it is acted on a false positive', async () => {
      const { keyId, key } = await newKey()
      const getKeyByHash = backend.store.keys.getKeyByHash.bind(backend.store.keys)
      const deletedMeanwhile = async (hash: string) => {
        const record = await getKeyByHash(hash)
        await post('keys.deleteKey', { keyId })
        return record
      }
      await withStore({ keys: { getKeyByHash: deletedMeanwhile } }, async (send) => {
        const body = JSON.stringify([found(key)])
        expect(await send(body)).toEqual({
          status: 200,
          body: [{ token_hash: sha256Hex(key), token_type: 'keygate_api_key', label: 'false_positive' }],
        })
      })
    })

    it('never looks up a token whose checksum does not match', async () => {
      const { key } = await newKey()
      const lookups: string[] = []
      const getKeyByHash = backend.store.keys.getKeyByHash.bind(backend.store.keys)
      const counted = (hash: string) => {
        lookups.push(hash)
        return getKeyByHash(hash)
      }
      await withStore({ keys: { getKeyByHash: counted } }, async (send) => {
        const wrongChecksum = `${key.slice(0, -1)}${key.endsWith('1') ? '2' : '1'}`
        const refused = JSON.stringify([found(wrongChecksum)])
        expect((await send(refused)).body[0].label).toBe('false_positive')
        expect(lookups).toEqual([])
        const looked = JSON.stringify([found(`sk_${bs58.encode(randomBytes(16))}`)])
        expect((await send(looked)).body[0].label).toBe('false_positive')
        expect(lookups).toHaveLength(1)
      })
    })
  })

  it('is not served when SECRET_SCANNING_KEYS_URL is off', async () => {
    const plane = await startTestControlPlane({ backend, secretScanningKeysUrl: null })
    try {
      const body = JSON.stringify([found('x')])
      const answer = await plane.app.inject({
        method: 'POST',
        url: REPORT,
        headers: signedHeaders(signer, body),
        payload: body,
      })
      expect(answer.statusCode).toBe(404)
    } finally {
      await plane.close()
    }
  })

  describe('keys.reportLeak', () => {
    const rootKeyWith = async (permissions: string[]) => {
      const { key, hash } = generateRootKey()
      await backend.store.rootKeys.createRootKey({ id: newId('root'), hash, permissions, createdAt: Date.now() })
      return key
    }

    it('acts as a GitHub report does, with the root key as reporter (v1 and v2)', async () => {
      const { apiId, keyId, key } = await newKey()
      const scanner = await rootKeyWith([`api.${apiId}.report_leak`])
      const auth = { ...headers, authorization: `Bearer ${scanner}` }
      const v1 = await call('/v1/keys.reportLeak', { key, url: 'https://paste.example/1', source: 'paste' }, auth)
      expect(v1).toEqual({ status: 200, body: { keyId, apiId, action: 'disable' } })
      expect((await getKey(keyId)).leaked).toMatchObject({
        reporter: expect.stringMatching(/^rootkey:root_/),
        source: 'paste',
      })
      const v2 = await call('/v2/keys.reportLeak', { key }, auth)
      expect(v2.status).toBe(200)
      expect(v2.body.data).toEqual({ keyId, apiId, action: 'disable' })
    })

    it("rolls a leaked key into one that is not marked: the mark is the old key's history", async () => {
      const { keyId, key } = await newKey()
      expect((await call('/v1/keys.reportLeak', { key, source: 'paste' })).status).toBe(200)
      expect((await getKey(keyId)).leaked).toBeDefined()
      const rolled = await call('/v1/keys.rerollKey', { keyId, expiration: 0 })
      expect(rolled.status, JSON.stringify(rolled.body)).toBe(200)
      expect((await getKey(rolled.body.keyId)).leaked).toBeUndefined()
    })

    it('hides the key from a root key without report_leak on its api, and answers no key 404', async () => {
      const { keyId, key } = await newKey()
      const other = await rootKeyWith(['api.*.read_key', 'api.*.update_key', 'api.api_other.report_leak'])
      const auth = { ...headers, authorization: `Bearer ${other}` }
      const v1 = await call('/v1/keys.reportLeak', { key }, auth)
      expect(v1.status).toBe(403)
      expect(v1.body.error.code).toBe('INSUFFICIENT_PERMISSIONS')
      const v2 = await call('/v2/keys.reportLeak', { key }, auth)
      expect(v2.status).toBe(404)
      expect((await getKey(keyId)).enabled).toBe(true)
      const unknown = await call('/v1/keys.reportLeak', { key: `sk_${bs58.encode(randomBytes(16))}` })
      expect(unknown.status).toBe(404)
      expect(hashKey(key)).not.toBe('')
    })
  })

  it('logs no key it was given, nor its hash, whatever became of the report', () => {
    const lines = logged.lines.join('')
    expect(lines).toContain('key reported leaked: policy applied')
    expect(made.length).toBeGreaterThan(10)
    for (const key of made) {
      expect(lines).not.toContain(key)
      expect(lines).not.toContain(hashKey(key))
      expect(lines).not.toContain(sha256Hex(key))
    }
  })
})

/**
 * A report sent by hand on a socket, for what is answered before its body has all come: `start` (the headers after
 * the content type, and what is sent of the body) is written at once, the rest with `send`. `answer()` waits for an
 * answer's head and JSON body; `closed` resolves when the server closes the connection.
 */
function reportHead(port: number, start: string) {
  const socket = net.connect(port, '127.0.0.1')
  let got = ''
  socket.on('data', (data) => (got += data.toString()))
  // A connection the server resets is what some tests expect: `closed` says so.
  socket.on('error', () => undefined)
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
  socket.write(`POST ${REPORT} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${start}`)
  const answer = (timeoutMs = 3_000) =>
    waitFor(
      (): { head: string; body: any } | undefined => {
        const split = got.indexOf('\r\n\r\n')
        const length = Number(/^content-length: (\d+)$/im.exec(got.slice(0, split))?.[1])
        const body = got.slice(split + 4)
        if (split < 0 || Buffer.byteLength(body) < length) return undefined
        return { head: got.slice(0, split), body: JSON.parse(body) }
      },
      'an answer before the body has all come',
      timeoutMs,
    )
  return { answer, closed, send: (text: string) => socket.write(text), close: () => socket.destroy() }
}
