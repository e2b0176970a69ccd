import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { newId } from '../../shared/ids.js'
import { rootKeyAddress } from '../../shared/root-keys/root-key-entity.js'
import {
  capturedLogger,
  openBackend,
  startTestControlPlane,
  startTestVerifier,
  TEST_ROOT_KEY,
  type TestServer,
} from '../support/apps.js'
import { waitFor } from '../support/wait-for.js'

/** What a server says to someone who has just found it: its address alone, a call sent to the wrong process. */
describe('first contact', () => {
  let controlPlane: TestServer
  let verifier: TestServer
  beforeAll(async () => {
    controlPlane = await startTestControlPlane()
    verifier = await startTestVerifier({ backend: controlPlane.backend })
  })
  afterAll(async () => {
    await verifier.close()
    await controlPlane.close()
  })

  it('GET / on a control plane names the console, the API reference and the API; a browser goes to the console', async () => {
    const index = await controlPlane.app.inject({ method: 'GET', url: '/' })
    expect(index.statusCode).toBe(200)
    expect(index.json()).toMatchObject({
      service: 'keygate control plane',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      links: { console: '/console', apiReference: '/docs', openapi: '/openapi.json', v2: '/v2/{service}.{method}' },
    })
    const browser = await controlPlane.app.inject({
      method: 'GET',
      url: '/',
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    })
    expect(browser.statusCode).toBe(302)
    // Relative: under a proxy's path prefix it leads to the console there.
    expect(browser.headers.location).toBe('console')
    // Every path it names is served.
    for (const path of ['/console', '/docs', '/openapi.json', '/docs/errors', '/livez'])
      expect((await controlPlane.app.inject({ method: 'GET', url: path })).statusCode, path).toBeLessThan(400)
  })

  it('GET / on a verifier says it is one, and where management operations go', async () => {
    const index = await verifier.app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html' } })
    expect(index.statusCode).toBe(200)
    expect(index.json()).toMatchObject({
      service: 'keygate verifier',
      about: expect.stringContaining('served by the control plane'),
      links: { forwardAuth: '/v1/authorize' },
    })
  })

  it('a management call sent to a verifier is a 404 that says it is a verifier, on v1 and v2', async () => {
    for (const url of ['/v1/keys.createKey', '/v2/apis.createApi']) {
      const answer = await verifier.app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_ROOT_KEY}` },
        payload: '{}',
      })
      expect(answer.statusCode, url).toBe(404)
      expect(answer.body, url).toContain('this is a verifier')
      expect(answer.body, url).toContain('served by the control plane')
    }
    // Not said of a path that is no operation at all, nor by a control plane.
    expect((await verifier.app.inject({ method: 'GET', url: '/nothing' })).body).not.toContain('verifier')
    expect(
      (
        await controlPlane.app.inject({
          method: 'POST',
          url: '/v1/keys.frobnicate',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_ROOT_KEY}` },
          payload: '{}',
        })
      ).body,
    ).not.toContain('verifier')
  })
})

describe('a control plane that no root key can authenticate to', () => {
  /** A memory backend whose root-key listings are counted: each reconcile of the control plane lists once. */
  async function countedBackend() {
    const backend = await openBackend()
    const counted = { backend, reconciles: 0 }
    const list = backend.store.rootKeys.listRootKeys.bind(backend.store.rootKeys)
    backend.store.rootKeys.listRootKeys = () => {
      counted.reconciles++
      return list()
    }
    return counted
  }
  const saidIn = (lines: string[]) => lines.filter((line) => line.includes('no root key can authenticate')).length

  it('says so as an error once at start, not at every reconcile, and again when the last root key goes', async () => {
    const { log, lines } = capturedLogger()
    const counted = await countedBackend()
    const server = await startTestControlPlane({ bootstrapRootKey: null, log, backend: counted.backend })
    try {
      await waitFor(() => saidIn(lines) === 1, 'the error at start')
      expect(JSON.parse(lines.find((line) => line.includes('no root key can authenticate'))!).level).toBe(50)
      const after = counted.reconciles
      await waitFor(() => counted.reconciles >= after + 2, 'two more reconciles', 5_000)
      expect(saidIn(lines)).toBe(1)
      const { hash, start } = generateRootKey()
      const record = { id: newId('root'), hash, start, permissions: ['*'], createdAt: Date.now() }
      await server.backend.store.rootKeys.createRootKey(record)
      // A reconcile has seen it once it has published it for verifiers: from then on nothing more is said.
      await waitFor(
        async () => (await server.backend.store.entities.getEntity(rootKeyAddress(hash))) !== null,
        'a reconcile to find the root key',
        5_000,
      )
      expect(saidIn(lines)).toBe(1)
      await server.backend.store.rootKeys.revokeRootKey(record.id)
      await waitFor(() => saidIn(lines) === 2, 'the error when the last root key went', 5_000)
    } finally {
      await server.close()
      await counted.backend.close()
    }
  })

  it('says so when the bootstrap key is set but turned off, and not while it is on', async () => {
    const off = capturedLogger()
    const counted = await countedBackend()
    await counted.backend.store.rootKeys.setBootstrapRootKeyDisabled(true)
    const server = await startTestControlPlane({ log: off.log, backend: counted.backend })
    try {
      await waitFor(() => saidIn(off.lines) === 1, 'the error with the bootstrap key off')
    } finally {
      await server.close()
      await counted.backend.close()
    }
    const on = capturedLogger()
    const other = await countedBackend()
    const withBootstrap = await startTestControlPlane({ log: on.log, backend: other.backend })
    try {
      await waitFor(() => other.reconciles >= 2, 'two reconciles', 5_000)
      expect(saidIn(on.lines)).toBe(0)
    } finally {
      await withBootstrap.close()
      await other.backend.close()
    }
  })
})
