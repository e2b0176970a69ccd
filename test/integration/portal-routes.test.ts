import { createHash } from 'node:crypto'
import { Redis } from 'ioredis'
import { expect, it, describe } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey, hashKey } from '../../shared/keys/key-material.js'
import { ManualClock, startTestControlPlane } from '../support/apps.js'
import { ADMIN_HEADERS, JSON_ONLY, onBothStores } from '../support/both-stores.js'
import { waitFor } from '../support/wait-for.js'

/**
 * The customer portal's routes (docs/portal.md) on both stores: Unkey's `portal.*` route tests re-expressed
 * (svc/api/routes/v2_portal_*: createSession's 200/400/401/403/404, exchangeCode's 200/401 and its replay, listKeys,
 * rerollKey, getVerifications), and Keygate's own: portals managed through the API, createKey and revokeKey,
 * revocation of sessions, and the refusal of cross-site calls. The clock is the test's, so that codes and tokens
 * expire when the test says.
 */
onBothStores('portal routes', { clock: () => new ManualClock(Date.now()), analytics: true }, (stack) => {
  const v2 = async (operation: string, payload: object | string, headers: Record<string, string> = ADMIN_HEADERS) => {
    const response = await stack.controlPlane.app.inject({ method: 'POST', url: `/v2/${operation}`, headers, payload })
    return { status: response.statusCode, body: response.json(), headers: response.headers, raw: response.body }
  }
  const rootKeyWith = async (permissions: string[]) => {
    const { key, hash } = generateRootKey()
    await stack.backend.store.rootKeys.createRootKey({ id: newId('root'), hash, permissions, createdAt: Date.now() })
    return { ...JSON_ONLY, authorization: `Bearer ${key}` }
  }
  const newApi = async (name = 'portal api') => {
    const created = await v2('apis.createApi', { name })
    expect(created.status, created.raw).toBe(200)
    return created.body.data.apiId as string
  }
  let slugs = 0
  const newPortal = async (apiIds: string[], fields: object = {}) => {
    const slug = `portal-${++slugs}-${stack.store}`
    const created = await v2('portal.createPortal', { slug, name: 'Acme keys', apiIds, ...fields })
    expect(created.status, created.raw).toBe(200)
    return { portalId: created.body.data.portalId as string, slug }
  }
  const newKey = async (apiId: string, externalId?: string) => {
    const created = await v2('keys.createKey', { apiId, ...(externalId ? { externalId } : {}) })
    expect(created.status, created.raw).toBe(200)
    return created.body.data as { keyId: string; key: string }
  }
  const ALL = ['keys:read', 'keys:create', 'keys:reroll', 'keys:revoke', 'analytics:read']
  const mint = async (portal: string, externalId: string, scopes = ALL, extra: object = {}) => {
    const minted = await v2('portal.createSession', { portal, externalId, scopes, ...extra })
    expect(minted.status, minted.raw).toBe(200)
    return minted.body.data as { id: string; url: string }
  }
  const codeOf = (url: string) => new URL(url).searchParams.get('code')!
  /** The cookie header a browser would send after exchanging the session's code. */
  const signIn = async (portal: string, externalId: string, scopes = ALL, extra: object = {}) => {
    const { id, url } = await mint(portal, externalId, scopes, extra)
    const exchanged = await v2('portal.exchangeCode', { code: codeOf(url) }, JSON_ONLY)
    expect(exchanged.status, exchanged.raw).toBe(200)
    const setCookie = String(exchanged.headers['set-cookie'])
    const cookie = setCookie.split(';')[0]!
    return { sessionId: id, headers: { ...JSON_ONLY, cookie }, token: exchanged.body.data.accessToken as string }
  }
  const asCustomer = (operation: string, headers: Record<string, string>, payload: object = {}) =>
    v2(operation, payload, headers)

  describe('portal.createSession', () => {
    it('answers a session id and a URL that carries a one-time code but not the id; by id or slug; no-store', async () => {
      const apiId = await newApi()
      const { portalId, slug } = await newPortal([apiId])
      for (const portal of [slug, portalId]) {
        const minted = await v2('portal.createSession', { portal, externalId: 'user_123', scopes: ['keys:read'] })
        expect(minted.status, minted.raw).toBe(200)
        expect(minted.body.data.id).toMatch(/^ps_/)
        expect(minted.body.data.url).toMatch(/^http:\/\/localhost\/portal\/\?code=pst_/)
        expect(minted.body.data.url).not.toContain(minted.body.data.id)
        expect(minted.headers['cache-control']).toBe('no-store')
      }
      const [a, b] = [await mint(slug, 'user_123'), await mint(slug, 'user_123')]
      expect(a.id).not.toBe(b.id)
      expect(a.url).not.toBe(b.url)
    })

    it('keeps the code only as its SHA-256', async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      const { id, url } = await mint(slug, 'user_hash', ['keys:read'], { preview: true })
      const code = codeOf(url)
      const now = stack.clock!.now()
      const session = await stack.backend.store.portalSessions.getSession(id, now)
      expect(session).toMatchObject({ id, externalId: 'user_hash', preview: true, scopes: ['keys:read'] })
      expect(JSON.stringify(session)).not.toContain(code)
      if (stack.store === 'redis') {
        const redis = new Redis(stack.redisUrl)
        const held = JSON.stringify([await redis.hgetall('kg:{ps}:s'), await redis.hgetall('kg:{ps}:c')])
        redis.disconnect()
        expect(held).not.toContain(code)
        expect(held).toContain(hashKey(code))
      }
    })

    it.each([
      ['missing externalId', { scopes: ['keys:read'] }],
      ['empty externalId', { externalId: '', scopes: ['keys:read'] }],
      ['missing portal', { externalId: 'u', scopes: ['keys:read'], portal: undefined }],
      ['a portal under 3 characters', { externalId: 'u', scopes: ['keys:read'], portal: 'ab' }],
      ['missing scopes', { externalId: 'u' }],
      ['empty scopes', { externalId: 'u', scopes: [] }],
      ['an unknown scope', { externalId: 'u', scopes: ['keys:delete_all'] }],
      ['a legacy rbac tuple', { externalId: 'u', scopes: ['api.*.read_key'] }],
      ['valid and invalid mixed', { externalId: 'u', scopes: ['keys:read', 'nope'] }],
      ['a javascript: return URL', { externalId: 'u', scopes: ['keys:read'], returnUrl: 'javascript:alert(1)' }],
    ])('refuses %s (400)', async (_name, body) => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      const answer = await v2('portal.createSession', { portal: slug, ...body })
      expect(answer.status, answer.raw).toBe(400)
    })

    it('refuses an api outside the portal (400), and narrows a session to some of its apis', async () => {
      const [one, two, other] = [await newApi(), await newApi(), await newApi()]
      const { slug } = await newPortal([one, two])
      const outside = await v2('portal.createSession', {
        portal: slug,
        externalId: 'u',
        scopes: ['keys:read'],
        apiIds: [other],
      })
      expect(outside.status, outside.raw).toBe(400)
      await newKey(one, 'narrow_user')
      await newKey(two, 'narrow_user')
      const { headers } = await signIn(slug, 'narrow_user', ['keys:read'], { apiIds: [two] })
      const listed = await asCustomer('portal.listKeys', headers)
      expect(listed.body.data.map((key: { apiId: string }) => key.apiId)).toEqual([two])
    })

    it('answers an unknown root key 401 and a missing one 400', async () => {
      const answer = await v2(
        'portal.createSession',
        { portal: 'x-portal', externalId: 'u', scopes: ['keys:read'] },
        {
          ...JSON_ONLY,
          authorization: 'Bearer not-a-root-key',
        },
      )
      expect(answer.status).toBe(401)
      expect(
        (await v2('portal.createSession', { portal: 'x-portal', externalId: 'u', scopes: ['keys:read'] }, JSON_ONLY))
          .status,
      ).toBe(400)
    })

    it('answers 404 "Portal not found." for no portal, and for one the root key may not mint for, naming neither', async () => {
      const apiId = await newApi()
      const { portalId, slug } = await newPortal([apiId])
      const unknown = await v2('portal.createSession', {
        portal: 'no-such-portal',
        externalId: 'secret_user',
        scopes: ['keys:read'],
      })
      expect(unknown.status).toBe(404)
      expect(unknown.body.error.detail).toBe('Portal not found.')
      expect(unknown.raw).not.toContain('no-such-portal')
      expect(unknown.raw).not.toContain('secret_user')
      for (const permissions of [['*'].filter(() => false), [`api.*.*`], ['portal.other.create_portal_session']]) {
        const headers = await rootKeyWith(permissions.length ? permissions : ['api.*.read_key'])
        const refused = await v2(
          'portal.createSession',
          { portal: slug, externalId: 'u', scopes: ['keys:read'] },
          headers,
        )
        expect(refused.status, refused.raw).toBe(404)
        expect(refused.raw).not.toContain(portalId)
        expect(refused.raw).not.toContain('create_portal_session')
      }
      const allowed = await rootKeyWith([
        `portal.${portalId}.create_portal_session`,
        `api.${apiId}.read_key`,
        `api.${apiId}.read_api`,
      ])
      expect(
        (await v2('portal.createSession', { portal: slug, externalId: 'u', scopes: ['keys:read'] }, allowed)).status,
      ).toBe(200)
    })

    it('refuses (403) a scope the root key cannot back on every api of the session, minting and auditing nothing', async () => {
      const [one, two] = [await newApi(), await newApi()]
      const { portalId, slug } = await newPortal([one, two])
      const cases: [string[], string[], number][] = [
        [
          ['keys:read'],
          [`api.${one}.read_key`, `api.${one}.read_api`, `api.${two}.read_key`, `api.${two}.read_api`],
          200,
        ],
        [['keys:read'], [`api.${one}.read_key`, `api.${one}.read_api`], 403],
        [['keys:read'], ['api.*.read_key'], 403],
        [['keys:reroll'], ['api.*.create_key', 'identity.*.create_identity'], 200],
        [['keys:create'], ['api.*.read_key'], 403],
        [['keys:revoke'], ['api.*.create_key'], 403],
        [['keys:revoke'], ['api.*.delete_key'], 200],
        [['analytics:read'], ['api.*.read_analytics'], 200],
        [['analytics:read', 'keys:read'], ['api.*.read_analytics'], 403],
      ]
      for (const [scopes, permissions, status] of cases) {
        const externalId = `scoped_${Math.random().toString(36).slice(2)}`
        const headers = await rootKeyWith([`portal.${portalId}.create_portal_session`, ...permissions])
        const answer = await v2('portal.createSession', { portal: slug, externalId, scopes }, headers)
        expect(answer.status, `${scopes.join()} with ${permissions.join()}: ${answer.raw}`).toBe(status)
        if (status === 403) {
          const audit = await stack.controlPlane.app.inject({
            method: 'GET',
            url: '/v1/audit.list?action=portal.createSession',
            headers: ADMIN_HEADERS,
          })
          expect(audit.body).not.toContain(externalId)
        }
      }
    })

    it("refuses keys:create and keys:reroll to a root key that may not give keys the customer's identity", async () => {
      // keys.createKey and keys.rerollKey need the right to bind a key to its identity (identity-binding.ts): a session
      // minted without it would create and roll keys of an identity its root key could not.
      const apiId = await newApi()
      const { portalId, slug } = await newPortal([apiId])
      const existing = await newKey(apiId, 'bound_identity')
      const identityId = (await stack.getKey(existing.keyId)).identity.id as string
      const keysOnly = await rootKeyWith([`portal.${portalId}.create_portal_session`, 'api.*.*'])
      const direct = await v2('keys.createKey', { apiId, externalId: 'bound_identity' }, keysOnly)
      expect(direct.status, direct.raw).toBe(403)
      const cases: [string, string[], string[], number][] = [
        ['bound_identity', ['keys:create'], [], 403],
        ['bound_identity', ['keys:reroll'], [], 403],
        ['bound_identity', ['keys:read', 'keys:revoke', 'analytics:read'], [], 200],
        ['bound_identity', ['keys:create', 'keys:reroll'], [`identity.${identityId}.read_identity`], 200],
        ['bound_identity', ['keys:create'], ['identity.*.create_identity'], 403],
        ['no_identity_yet', ['keys:create'], [], 403],
        ['no_identity_yet', ['keys:create'], ['identity.*.create_identity'], 200],
      ]
      for (const [externalId, scopes, identityRights, status] of cases) {
        const headers = await rootKeyWith([`portal.${portalId}.create_portal_session`, 'api.*.*', ...identityRights])
        const answer = await v2('portal.createSession', { portal: slug, externalId, scopes }, headers)
        expect(answer.status, `${externalId} ${scopes.join()} with ${identityRights.join()}: ${answer.raw}`).toBe(
          status,
        )
      }
    })

    it('answers a disabled portal 403 "Portal is disabled." before the scopes are weighed', async () => {
      const apiId = await newApi()
      const { portalId, slug } = await newPortal([apiId], { enabled: false })
      const headers = await rootKeyWith([`portal.${portalId}.create_portal_session`])
      const answer = await v2('portal.createSession', { portal: slug, externalId: 'u', scopes: ['keys:read'] }, headers)
      expect(answer.status).toBe(403)
      expect(answer.body.error.detail).toBe('Portal is disabled.')
    })

    it('audits the mint with the portal and the customer', async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      const { id } = await mint(slug, 'audited_user')
      const audit = await stack.controlPlane.app.inject({
        method: 'GET',
        url: '/v1/audit.list?action=portal.createSession',
        headers: ADMIN_HEADERS,
      })
      const entry = audit.json().entries.find((e: { after?: { sessionId?: string } }) => e.after?.sessionId === id)
      expect(entry).toMatchObject({ after: { slug, externalId: 'audited_user' } })
      expect(JSON.stringify(entry)).not.toMatch(/pst_/)
    })
  })

  describe('portal.exchangeCode', () => {
    it('answers a 24-hour token once, set as an HttpOnly SameSite=Strict cookie, and keeps only its hash', async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      const { id, url } = await mint(slug, 'user_valid')
      const before = stack.clock!.now()
      const exchanged = await v2('portal.exchangeCode', { code: codeOf(url) }, JSON_ONLY)
      expect(exchanged.status, exchanged.raw).toBe(200)
      expect(exchanged.body.data.accessToken).toMatch(/^pat_/)
      expect(exchanged.body.data.expiresAt).toBe(before + 24 * 3_600_000)
      expect(exchanged.headers['cache-control']).toBe('no-store')
      const cookie = String(exchanged.headers['set-cookie'])
      expect(cookie).toMatch(/^portal_session=pat_[^;]+; Max-Age=86400; Path=\/; HttpOnly; SameSite=Strict$/)
      const session = await stack.backend.store.portalSessions.getSession(id, stack.clock!.now())
      expect(JSON.stringify(session)).not.toContain(exchanged.body.data.accessToken)
      const again = await v2('portal.exchangeCode', { code: codeOf(url) }, JSON_ONLY)
      expect(again.status).toBe(401)
      expect(again.body.error.detail).toBe('Session is invalid, expired, or has already been used.')
    })

    it('gives one winner among concurrent exchanges; the others are refused, not errors', async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      const { url } = await mint(slug, 'user_race')
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => v2('portal.exchangeCode', { code: codeOf(url) }, JSON_ONLY)),
      )
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1)
      expect(answers.filter((a) => a.status === 401)).toHaveLength(7)
    })

    it('refuses an unknown and an expired code (401, the code not echoed), and an empty one (400)', async () => {
      const unknown = await v2('portal.exchangeCode', { code: 'nonexistent_code' }, JSON_ONLY)
      expect(unknown.status).toBe(401)
      expect(unknown.raw).not.toContain('nonexistent_code')
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      const { url } = await mint(slug, 'user_late')
      stack.clock!.advance(15 * 60_000)
      const late = await v2('portal.exchangeCode', { code: codeOf(url) }, JSON_ONLY)
      expect(late.status).toBe(401)
      expect(late.body.error.detail).toBe('Session is invalid, expired, or has already been used.')
      expect(late.raw).not.toContain(codeOf(url))
      expect((await v2('portal.exchangeCode', { code: '' }, JSON_ONLY)).status).toBe(400)
    })

    it('refuses an exchange another site asks for (403)', async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      const { url } = await mint(slug, 'user_csrf')
      const forged = await v2(
        'portal.exchangeCode',
        { code: codeOf(url) },
        { ...JSON_ONLY, origin: 'https://evil.example' },
      )
      expect(forged.status).toBe(403)
    })
  })

  describe('the session', () => {
    it('authenticates only by the cookie: none 401, unknown 401, with an Authorization header 401, expired 401', async () => {
      const missing = await asCustomer('portal.listKeys', JSON_ONLY)
      expect(missing.status).toBe(401)
      expect(missing.body.error.type).toMatch(/portal_token_missing$/)
      const unknown = await asCustomer('portal.listKeys', { ...JSON_ONLY, cookie: 'portal_session=pat_nope' })
      expect(unknown.status).toBe(401)
      expect(unknown.body.error.detail).toBe('The portal session is invalid or has expired.')
      expect(unknown.raw).not.toContain('pat_nope')
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      const { headers, token, sessionId } = await signIn(slug, 'user_expiring')
      expect((await asCustomer('portal.listKeys', headers)).status).toBe(200)
      expect((await asCustomer('portal.listKeys', { ...headers, authorization: `Bearer ${token}` })).status).toBe(401)
      stack.clock!.advance(24 * 3_600_000)
      const expired = await asCustomer('portal.listKeys', headers)
      expect(expired.status).toBe(401)
      expect(expired.raw).not.toContain(sessionId)
      expect(expired.raw).not.toContain(token)
    })

    it('asks no refused session for a bearer token (no WWW-Authenticate), as a refused root key is asked', async () => {
      const missing = await asCustomer('portal.listKeys', JSON_ONLY)
      const unknown = await asCustomer('portal.listKeys', { ...JSON_ONLY, cookie: 'portal_session=pat_nope' })
      const code = await v2('portal.exchangeCode', { code: 'pc_unknown' }, JSON_ONLY)
      for (const answer of [missing, unknown, code]) {
        expect(answer.status, answer.raw).toBe(401)
        expect(answer.headers['www-authenticate'], answer.raw).toBeUndefined()
      }
      const rootKey = await v2('apis.listKeys', { apiId: 'api_x' }, { ...JSON_ONLY, authorization: 'Bearer nope' })
      expect(rootKey.status, rootKey.raw).toBe(401)
      expect(rootKey.headers['www-authenticate']).toBe('Bearer')
    })

    it('is no root key: a session cookie on a management route is refused as no Authorization at all', async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      await newKey(apiId, 'cookie_user')
      const { headers } = await signIn(slug, 'cookie_user')
      const answer = await v2('apis.listKeys', { apiId }, headers)
      expect(answer.status).toBe(400)
      expect(answer.body.error.type).toMatch(/authentication\/missing$/)
      expect(answer.raw).not.toContain('cookie_user')
    })

    it('checks the session before reading the body: a bad body without a cookie is 401', async () => {
      const answer = await v2('portal.rerollKey', { nonsense: true }, JSON_ONLY)
      expect(answer.status).toBe(401)
    })

    it('refuses calls from other sites: a foreign Origin or Sec-Fetch-Site cross-site / same-site (403)', async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      const { headers } = await signIn(slug, 'user_sites')
      for (const extra of [
        { origin: 'https://evil.example' },
        { 'sec-fetch-site': 'cross-site' },
        { 'sec-fetch-site': 'same-site' },
      ] as Record<string, string>[]) {
        const answer = await asCustomer('portal.listKeys', { ...headers, ...extra })
        expect(answer.status, JSON.stringify(extra)).toBe(403)
      }
      const sameOrigin = await asCustomer('portal.listKeys', {
        ...headers,
        origin: 'http://localhost:80',
        host: 'localhost:80',
        'sec-fetch-site': 'same-origin',
      })
      expect(sameOrigin.status, sameOrigin.raw).toBe(200)
    })

    it('ends when revoked by a root key, signed out, its portal disabled (403) or deleted', async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      const revoked = await signIn(slug, 'user_revoked')
      expect((await v2('portal.revokeSession', { sessionId: revoked.sessionId })).status).toBe(200)
      expect((await asCustomer('portal.listKeys', revoked.headers)).status).toBe(401)
      expect((await v2('portal.revokeSession', { sessionId: 'ps_unknown' })).status).toBe(404)

      const out = await signIn(slug, 'user_out')
      const signedOut = await asCustomer('portal.signOut', out.headers)
      expect(signedOut.status).toBe(200)
      expect(String(signedOut.headers['set-cookie'])).toMatch(/^portal_session=; Max-Age=0/)
      expect((await asCustomer('portal.listKeys', out.headers)).status).toBe(401)

      const live = await signIn(slug, 'user_live')
      expect((await v2('portal.updatePortal', { portal: slug, enabled: false })).status).toBe(200)
      const disabled = await asCustomer('portal.listKeys', live.headers)
      expect(disabled.status).toBe(403)
      expect(disabled.body.error.detail).toBe('Portal is disabled.')
      expect((await v2('portal.updatePortal', { portal: slug, enabled: true })).status).toBe(200)
      expect((await asCustomer('portal.listKeys', live.headers)).status).toBe(200)
      expect((await v2('portal.deletePortal', { portal: slug })).status).toBe(200)
      expect((await asCustomer('portal.listKeys', live.headers)).status).toBe(401)
    })

    it('ends when the root key that minted it is revoked or rolled, or the bootstrap key turned off', async () => {
      const apiId = await newApi()
      const { portalId, slug } = await newPortal([apiId])
      const minter = async () => {
        const { key, hash } = generateRootKey()
        const id = newId('root')
        const permissions = [`portal.${portalId}.create_portal_session`, 'api.*.read_key', 'api.*.read_api']
        await stack.backend.store.rootKeys.createRootKey({ id, hash, permissions, createdAt: Date.now() })
        return { id, headers: { ...JSON_ONLY, authorization: `Bearer ${key}` } }
      }
      const sessionOf = async (headers: Record<string, string>) => {
        const minted = await v2(
          'portal.createSession',
          { portal: slug, externalId: 'minted', scopes: ['keys:read'] },
          headers,
        )
        expect(minted.status, minted.raw).toBe(200)
        const exchanged = await v2('portal.exchangeCode', { code: codeOf(minted.body.data.url) }, JSON_ONLY)
        const cookie = String(exchanged.headers['set-cookie']).split(';')[0]!
        return { ...JSON_ONLY, cookie }
      }
      const revokedMinter = await minter()
      const revokedSession = await sessionOf(revokedMinter.headers)
      const rolledMinter = await minter()
      const rolledSession = await sessionOf(rolledMinter.headers)
      const bootstrapSession = await sessionOf(ADMIN_HEADERS)
      for (const headers of [revokedSession, rolledSession, bootstrapSession])
        expect((await asCustomer('portal.listKeys', headers)).status).toBe(200)

      const revoke = await stack.post('rootKeys.revokeRootKey', { rootKeyId: revokedMinter.id })
      expect(revoke.status, JSON.stringify(revoke.body)).toBe(200)
      const refused = await asCustomer('portal.listKeys', revokedSession)
      expect(refused.status).toBe(401)
      expect(refused.body.error.detail).toBe('The portal session is invalid or has expired.')
      expect((await asCustomer('portal.getSession', revokedSession)).status).toBe(401)

      const roll = await stack.post('rootKeys.rollRootKey', { rootKeyId: rolledMinter.id })
      expect(roll.status, JSON.stringify(roll.body)).toBe(200)
      expect((await asCustomer('portal.listKeys', rolledSession)).status).toBe(401)

      await stack.backend.store.rootKeys.setBootstrapRootKeyDisabled(true)
      try {
        expect((await asCustomer('portal.listKeys', bootstrapSession)).status).toBe(401)
      } finally {
        await stack.backend.store.rootKeys.setBootstrapRootKeyDisabled(false)
      }
      expect((await asCustomer('portal.listKeys', bootstrapSession)).status).toBe(200)
    })

    /** A control plane whose portal customers reach over https (PORTAL_URL), through a proxy that terminates TLS. */
    const behindTlsProxy = async (
      test: (
        call: (operation: string, payload: object, headers: Record<string, string>) => Promise<any>,
      ) => Promise<void>,
    ) => {
      const server = await startTestControlPlane({
        backend: stack.backend,
        clock: stack.clock,
        portalUrl: 'https://keys.acme.example/portal/',
      })
      try {
        await test(async (operation, payload, headers) => {
          const response = await server.app.inject({ method: 'POST', url: `/v2/${operation}`, headers, payload })
          return { status: response.statusCode, raw: response.body, headers: response.headers, body: response.json() }
        })
      } finally {
        await server.close()
      }
    }
    const mintBehind = async (call: (o: string, p: object, h: Record<string, string>) => Promise<any>, who: string) => {
      const { slug } = await newPortal([await newApi()])
      const minted = await call('portal.createSession', { portal: slug, externalId: who, scopes: ALL }, ADMIN_HEADERS)
      expect(minted.body.data.url).toMatch(/^https:\/\/keys\.acme\.example\/portal\/\?code=pst_/)
      return codeOf(minted.body.data.url)
    }

    it('sets the cookie Secure when customers reach the portal over https, though the proxy speaks http to Keygate', async () => {
      await behindTlsProxy(async (call) => {
        const exchanged = await call(
          'portal.exchangeCode',
          { code: await mintBehind(call, 'secure_cookie') },
          JSON_ONLY,
        )
        expect(exchanged.status, exchanged.raw).toBe(200)
        const setCookie = String(exchanged.headers['set-cookie'])
        expect(setCookie).toMatch(/; Secure(;|$)/)
        const signedOut = await call('portal.signOut', {}, { ...JSON_ONLY, cookie: setCookie.split(';')[0]! })
        expect(String(signedOut.headers['set-cookie'])).toMatch(/^portal_session=; Max-Age=0;.*; Secure(;|$)/)
      })
    })

    it("accepts the portal's own origin whatever Host the proxy sends, and still refuses every other", async () => {
      await behindTlsProxy(async (call) => {
        // nginx's default: the upstream's address as Host. The browser's Origin is the portal's.
        const browser = {
          ...JSON_ONLY,
          origin: 'https://keys.acme.example',
          host: '127.0.0.1:7070',
          'sec-fetch-site': 'same-origin',
        }
        const exchanged = await call('portal.exchangeCode', { code: await mintBehind(call, 'proxied_host') }, browser)
        expect(exchanged.status, exchanged.raw).toBe(200)
        const signedIn = { ...browser, cookie: String(exchanged.headers['set-cookie']).split(';')[0]! }
        expect((await call('portal.listKeys', {}, signedIn)).status).toBe(200)
        for (const origin of ['https://evil.example', 'http://keys.acme.example', 'https://keys.acme.example:8443']) {
          const { 'sec-fetch-site': _site, ...withoutFetchMetadata } = signedIn
          expect((await call('portal.listKeys', {}, { ...withoutFetchMetadata, origin })).status, origin).toBe(403)
        }
      })
    })

    it('answers getSession with the branding, scopes and apis by name', async () => {
      const apiId = await newApi('Payments <b>api</b>')
      const { slug } = await newPortal([apiId], {
        name: '<script>x</script>',
        logoUrl: 'https://acme.example/l.png',
        accentColor: '#AA0011',
      })
      const { headers, sessionId } = await signIn(slug, 'user_view', ['keys:read'], {
        returnUrl: 'https://app.example/back',
      })
      const view = await asCustomer('portal.getSession', headers)
      expect(view.body.data).toMatchObject({
        sessionId,
        externalId: 'user_view',
        scopes: ['keys:read'],
        returnUrl: 'https://app.example/back',
        portal: { name: '<script>x</script>', logoUrl: 'https://acme.example/l.png', accentColor: '#aa0011' },
        apis: [{ id: apiId, name: 'Payments <b>api</b>' }],
      })
    })
  })

  describe('keys in the portal', () => {
    it("lists only the customer's keys in the session's apis, and needs keys:read", async () => {
      const [one, two, outside] = [await newApi(), await newApi(), await newApi()]
      const { slug } = await newPortal([one, two])
      const mine = [await newKey(one, 'cust_a'), await newKey(two, 'cust_a')]
      await newKey(one, 'cust_b')
      await newKey(outside, 'cust_a')
      await newKey(one)
      const { headers } = await signIn(slug, 'cust_a', ['keys:read'])
      const listed = await asCustomer('portal.listKeys', headers)
      expect(listed.status, listed.raw).toBe(200)
      expect(listed.body.data.map((key: { keyId: string }) => key.keyId).sort()).toEqual(
        mine.map((k) => k.keyId).sort(),
      )
      for (const key of listed.body.data) expect(key.identity.externalId).toBe('cust_a')
      const paged = await asCustomer('portal.listKeys', headers, { limit: 1 })
      expect(paged.body.pagination.hasMore).toBe(true)
      const next = await asCustomer('portal.listKeys', headers, { limit: 1, cursor: paged.body.pagination.cursor })
      expect(next.body.data[0].keyId).not.toBe(paged.body.data[0].keyId)
      expect(next.body.pagination.hasMore).toBe(false)

      const rerollOnly = await signIn(slug, 'cust_a', ['keys:reroll'])
      const refused = await asCustomer('portal.listKeys', rerollOnly.headers)
      expect(refused.status).toBe(403)
      expect(refused.body.error.detail).toBe("Missing permission: 'keys:read'")
      expect(refused.raw).not.toContain('cust_a')
      expect(refused.raw).not.toContain(mine[0]!.keyId)
    })

    it("rolls the customer's key (same identity, old one working for the overlap); another's or an outside key is 404", async () => {
      const [apiId, outside] = [await newApi(), await newApi()]
      const { slug } = await newPortal([apiId])
      const own = await newKey(apiId, 'roller')
      const others = await newKey(apiId, 'someone_else')
      const beyond = await newKey(outside, 'roller')
      const { headers } = await signIn(slug, 'roller')
      const rolled = await asCustomer('portal.rerollKey', headers, { keyId: own.keyId, expiration: 60_000 })
      expect(rolled.status, rolled.raw).toBe(200)
      expect(rolled.body.data.keyId).not.toBe(own.keyId)
      expect(rolled.headers['cache-control']).toBe('no-store')
      expect((await stack.getKey(rolled.body.data.keyId)).ownerId).toBe('roller')
      expect((await stack.verify({ key: rolled.body.data.key })).valid).toBe(true)
      expect((await stack.verify({ key: own.key })).valid).toBe(true)
      for (const keyId of [others.keyId, beyond.keyId, 'key_missing']) {
        const refused = await asCustomer('portal.rerollKey', headers, { keyId, expiration: 0 })
        expect(refused.status).toBe(404)
        expect(refused.body.error.detail).toBe('The specified key was not found.')
        expect(refused.raw).not.toContain(keyId)
      }
      const tooLong = await asCustomer('portal.rerollKey', headers, { keyId: own.keyId, expiration: 8 * 86_400_000 })
      expect(tooLong.status).toBe(400)
    })

    it('checks keys:reroll before looking the key up: the same 403 for an owned key and a missing one', async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      const own = await newKey(apiId, 'create_only')
      const { headers } = await signIn(slug, 'create_only', ['keys:create'])
      const owned = await asCustomer('portal.rerollKey', headers, { keyId: own.keyId, expiration: 0 })
      const missing = await asCustomer('portal.rerollKey', headers, { keyId: 'key_missing', expiration: 0 })
      expect(owned.status).toBe(403)
      expect(owned.body.error).toEqual({ ...missing.body.error })
      expect(owned.raw).not.toContain(own.keyId)
    })

    it("creates keys with the portal's defaults and the customer's identity, nothing the browser sends beyond a name", async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId], {
        keyDefaults: {
          prefix: 'acme',
          credits: { remaining: 50, refill: { interval: 'daily', amount: 50 } },
          ratelimits: [{ name: 'requests', limit: 10, duration: 60_000, autoApply: true }],
          expiresInMs: 86_400_000,
        },
        maxKeysPerIdentity: 2,
      })
      const { headers } = await signIn(slug, 'creator')
      const created = await asCustomer('portal.createKey', headers, { name: 'ci <key>' })
      expect(created.status, created.raw).toBe(200)
      expect(created.body.data.key).toMatch(/^acme_/)
      const record = await stack.getKey(created.body.data.keyId)
      expect(record).toMatchObject({ ownerId: 'creator', name: 'ci <key>', remaining: 50, apiId })
      expect(record.expires).toBe(stack.clock!.now() + 86_400_000)
      expect((await stack.verify({ key: created.body.data.key })).valid).toBe(true)
      const smuggled = await asCustomer('portal.createKey', headers, { name: 'x', credits: { remaining: 1e9 } })
      expect(smuggled.status).toBe(400)
      expect((await asCustomer('portal.createKey', headers, {})).status).toBe(200)
      const third = await asCustomer('portal.createKey', headers, {})
      expect(third.status).toBe(412)
      const audit = await stack.controlPlane.app.inject({
        method: 'GET',
        url: '/v1/audit.list?action=portal.createKey',
        headers: ADMIN_HEADERS,
      })
      const entry = audit.json().entries.find((e: { keyId?: string }) => e.keyId === created.body.data.keyId)
      expect(entry.portalSession).toMatchObject({ externalId: 'creator' })
      expect(entry.rootKeyId).toBe('root_bootstrap')
    })

    it('holds maxKeysPerIdentity against concurrent creates: no more live keys than the portal allows', async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId], { maxKeysPerIdentity: 2 })
      const { headers } = await signIn(slug, 'racing_creator')
      const answers = await Promise.all(Array.from({ length: 10 }, () => asCustomer('portal.createKey', headers, {})))
      for (const answer of answers) expect([200, 412], answer.raw).toContain(answer.status)
      const created = answers.filter((answer) => answer.status === 200)
      const held = (await asCustomer('portal.listKeys', headers)).body.data as { keyId: string }[]
      expect(held.length).toBeLessThanOrEqual(2)
      expect(held.map((key) => key.keyId).sort()).toEqual(created.map((answer) => answer.body.data.keyId).sort())
    })

    it('counts a roll with an overlap as a key more: refused at the maximum, as are concurrent ones past it', async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId], { maxKeysPerIdentity: 2 })
      const { headers } = await signIn(slug, 'piling_roller')
      const first = await asCustomer('portal.createKey', headers, {})
      expect(first.status, first.raw).toBe(200)
      const rolls = await Promise.all(
        Array.from({ length: 6 }, () =>
          asCustomer('portal.rerollKey', headers, { keyId: first.body.data.keyId, expiration: 7 * 86_400_000 }),
        ),
      )
      // One roll of the key at most: the others are refused at the maximum, or find it rolled already (409).
      for (const roll of rolls) expect([200, 409, 412], roll.raw).toContain(roll.status)
      expect(rolls.filter((roll) => roll.status === 200).length).toBeLessThanOrEqual(1)
      const live = async () => {
        const keys = (await asCustomer('portal.listKeys', headers)).body.data as { expires?: number }[]
        return keys.filter((key) => key.expires === undefined || key.expires > stack.clock!.now())
      }
      expect((await live()).length).toBeLessThanOrEqual(2)
      // At the maximum a roll with an overlap would hold one more; a roll without one replaces the key.
      const held = (await asCustomer('portal.listKeys', headers)).body.data as { keyId: string }[]
      const withoutOverlap = held.find((key) => key.keyId !== first.body.data.keyId) ?? held[0]!
      if ((await live()).length === 2) {
        const refused = await asCustomer('portal.rerollKey', headers, {
          keyId: withoutOverlap.keyId,
          expiration: 60_000,
        })
        expect(refused.status, refused.raw).toBe(412)
      }
      const replaced = await asCustomer('portal.rerollKey', headers, { keyId: withoutOverlap.keyId, expiration: 0 })
      expect(replaced.status, replaced.raw).toBe(200)
      expect((await live()).length).toBeLessThanOrEqual(2)
    })

    it('writes nothing when refusing at the maximum: no key flickers into being for verifiers and webhooks', async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId], { maxKeysPerIdentity: 1 })
      const { headers } = await signIn(slug, 'full_holder')
      const held = await asCustomer('portal.createKey', headers, {})
      expect(held.status, held.raw).toBe(200)
      const written = async () =>
        (await stack.backend.store.changes.readRevisions()).shards.reduce((sum, shard) => sum + shard.rev, 0)
      const before = await written()
      expect((await asCustomer('portal.createKey', headers, {})).status).toBe(412)
      const roll = { keyId: held.body.data.keyId, expiration: 60_000 }
      expect((await asCustomer('portal.rerollKey', headers, roll)).status).toBe(412)
      expect(await written()).toBe(before)
    })

    it('counts only live keys toward the maximum: an expired key, or one rolled without overlap, holds no room', async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId], { maxKeysPerIdentity: 1, keyDefaults: { expiresInMs: 60_000 } })
      const { headers } = await signIn(slug, 'expiring_holder')
      const first = await asCustomer('portal.createKey', headers, {})
      expect(first.status, first.raw).toBe(200)
      expect((await asCustomer('portal.createKey', headers, {})).status).toBe(412)
      stack.clock!.advance(60_000)
      const second = await asCustomer('portal.createKey', headers, {})
      expect(second.status, second.raw).toBe(200)
      const rolled = await asCustomer('portal.rerollKey', headers, { keyId: second.body.data.keyId, expiration: 0 })
      expect(rolled.status, rolled.raw).toBe(200)
      const again = await asCustomer('portal.rerollKey', headers, { keyId: rolled.body.data.keyId, expiration: 0 })
      expect(again.status, again.raw).toBe(200)
    })

    it('deletes the old key of a roll without overlap: 1,005 such rolls leave no key behind, and a createKey succeeds', async () => {
      // An expired copy left per roll would count toward the keys a listing reads (at most 1,000) until every call of
      // the portal was refused. Five keys rolled 201 times each, side by side, to keep the test short (each
      // chain holds two keys for a moment: the default maximum, 20, leaves room for that).
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      const { headers } = await signIn(slug, 'serial_roller')
      const chains = await Promise.all(
        Array.from({ length: 5 }, async () => {
          const first = await asCustomer('portal.createKey', headers, {})
          expect(first.status, first.raw).toBe(200)
          let held = first.body.data as { keyId: string; key: string }
          for (let roll = 1; roll <= 201; roll++) {
            const rolled = await asCustomer('portal.rerollKey', headers, { keyId: held.keyId, expiration: 0 })
            expect(rolled.status, `roll ${roll}: ${rolled.raw}`).toBe(200)
            held = rolled.body.data
          }
          return { first: first.body.data as { keyId: string; key: string }, held }
        }),
      )
      const created = await asCustomer('portal.createKey', headers, {})
      expect(created.status, created.raw).toBe(200)
      const listed = (await asCustomer('portal.listKeys', headers)).body.data as { keyId: string }[]
      const expected = [...chains.map((chain) => chain.held.keyId), created.body.data.keyId]
      expect(listed.map((key) => key.keyId).sort()).toEqual(expected.sort())
      const { first, held } = chains[0]!
      const gone = await v2('keys.getKey', { keyId: first.keyId })
      expect(gone.status, gone.raw).toBe(404)
      expect((await stack.verify({ key: first.key })).valid).toBe(false)
      expect((await stack.verify({ key: held.key })).valid).toBe(true)
      const audit = await stack.controlPlane.app.inject({
        method: 'GET',
        url: `/v1/audit.list?action=portal.rerollKey&keyId=${first.keyId}`,
        headers: ADMIN_HEADERS,
      })
      expect(audit.json().entries[0].after).toMatchObject({ oldKeyDeleted: true })
    }, 60_000)

    it('counts no expired key toward the maximum: 1,005 of them, then a createKey', async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId], { maxKeysPerIdentity: 1 })
      const expires = stack.clock!.now() + 60_000
      for (let batch = 0; batch < 1_005; batch += 67)
        await Promise.all(
          Array.from({ length: 67 }, async () => {
            const made = await v2('keys.createKey', { apiId, externalId: 'long_customer', expires })
            expect(made.status, made.raw).toBe(200)
          }),
        )
      stack.clock!.advance(60_000)
      const { headers } = await signIn(slug, 'long_customer')
      const created = await asCustomer('portal.createKey', headers, {})
      expect(created.status, created.raw).toBe(200)
      expect((await asCustomer('portal.createKey', headers, {})).status).toBe(412)
    }, 60_000)

    it("rolls a key into one as long as the portal's keyDefaults.byteLength says, as a new key is", async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId], { keyDefaults: { prefix: 'long', byteLength: 64 } })
      const { headers } = await signIn(slug, 'long_keys')
      const created = await asCustomer('portal.createKey', headers, {})
      const rolled = await asCustomer('portal.rerollKey', headers, { keyId: created.body.data.keyId, expiration: 0 })
      expect(rolled.status, rolled.raw).toBe(200)
      expect(rolled.body.data.key).toMatch(/^long_/)
      // 64 random bytes are ~87 base58 characters; the default 16, ~22.
      expect(rolled.body.data.key.length).toBeGreaterThanOrEqual(created.body.data.key.length - 2)
      expect((await stack.verify({ key: rolled.body.data.key })).valid).toBe(true)
    })

    it('needs keys:create to create a key: without it a 403, and no key', async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      const { headers } = await signIn(slug, 'reader_only', [
        'keys:read',
        'keys:reroll',
        'keys:revoke',
        'analytics:read',
      ])
      const refused = await asCustomer('portal.createKey', headers, {})
      expect(refused.status, refused.raw).toBe(403)
      expect(refused.body.error.detail).toBe("Missing permission: 'keys:create'")
      expect((await asCustomer('portal.listKeys', headers)).body.data).toEqual([])
    })

    it('takes an api out of every session at once when it leaves the portal, though the sessions named it', async () => {
      const [staying, leaving] = [await newApi(), await newApi()]
      const { slug } = await newPortal([staying, leaving])
      const kept = await newKey(staying, 'portal_shrinks')
      const cut = await newKey(leaving, 'portal_shrinks')
      const { headers } = await signIn(slug, 'portal_shrinks')
      expect((await asCustomer('portal.listKeys', headers)).body.data).toHaveLength(2)
      expect((await v2('portal.updatePortal', { portal: slug, apiIds: [staying] })).status).toBe(200)

      const listed = await asCustomer('portal.listKeys', headers)
      expect(listed.body.data.map((key: { keyId: string }) => key.keyId)).toEqual([kept.keyId])
      const view = await asCustomer('portal.getSession', headers)
      expect(view.body.data.apis.map((api: { id: string }) => api.id)).toEqual([staying])
      for (const [operation, body] of [
        ['portal.rerollKey', { keyId: cut.keyId, expiration: 0 }],
        ['portal.revokeKey', { keyId: cut.keyId }],
      ] as const) {
        const refused = await asCustomer(operation, headers, body)
        expect(refused.status, `${operation}: ${refused.raw}`).toBe(404)
      }
      expect((await asCustomer('portal.createKey', headers, { apiId: leaving })).status).toBe(400)
      expect((await stack.verify({ key: cut.key })).valid).toBe(true)
      // Its verifications are out of the session too, named or not.
      await stack.ingestAnalytics()
      const now = stack.clock!.now()
      for (const named of [{ keyId: cut.keyId }, {}]) {
        const counted = await asCustomer('portal.getVerifications', headers, {
          startTime: now - 3_600_000,
          endTime: now + 3_600_000,
          ...named,
        })
        expect(counted.status, counted.raw).toBe(200)
        expect(counted.body.data.reduce((sum: number, p: { total: number }) => sum + p.total, 0)).toBe(0)
      }
    })

    it('asks which api when the session has several, and refuses one outside it', async () => {
      const [one, two, other] = [await newApi(), await newApi(), await newApi()]
      const { slug } = await newPortal([one, two])
      const { headers } = await signIn(slug, 'multi')
      expect((await asCustomer('portal.createKey', headers, {})).status).toBe(400)
      expect((await asCustomer('portal.createKey', headers, { apiId: other })).status).toBe(400)
      expect((await asCustomer('portal.createKey', headers, { apiId: two })).status).toBe(200)
    })

    it("revokes the customer's key (it stops verifying); another's is 404; needs keys:revoke", async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      const own = await newKey(apiId, 'revoker')
      const others = await newKey(apiId, 'bystander')
      const readOnly = await signIn(slug, 'revoker', ['keys:read'])
      // The scope before the key: the same 403 for the customer's key, another's and none (nothing is learnt).
      const refusals = await Promise.all(
        [own.keyId, others.keyId, 'key_missing'].map((keyId) =>
          asCustomer('portal.revokeKey', readOnly.headers, { keyId }),
        ),
      )
      for (const refused of refusals) {
        expect(refused.status, refused.raw).toBe(403)
        expect(refused.body.error).toEqual(refusals[0]!.body.error)
      }
      expect((await stack.verify({ key: own.key })).valid).toBe(true)
      const { headers } = await signIn(slug, 'revoker')
      expect((await asCustomer('portal.revokeKey', headers, { keyId: others.keyId })).status).toBe(404)
      expect((await stack.verify({ key: others.key })).valid).toBe(true)
      expect((await asCustomer('portal.revokeKey', headers, { keyId: own.keyId })).status).toBe(200)
      await waitFor(
        async () => (await stack.verify({ key: own.key })).code === 'NOT_FOUND',
        'the revoke on the verifier',
        5_000,
      )
    })

    it("counts the customer's verifications by the hour and outcome, only theirs, and needs analytics:read", async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      const own = await newKey(apiId, 'counted')
      const second = await newKey(apiId, 'counted')
      const other = await newKey(apiId, 'uncounted')
      for (let i = 0; i < 3; i++) await stack.verify({ key: own.key })
      expect((await stack.verify({ key: second.key, authorization: { permissions: 'nothing.granted' } })).code).toBe(
        'INSUFFICIENT_PERMISSIONS',
      )
      await stack.verify({ key: other.key })
      await stack.ingestAnalytics()
      const { headers } = await signIn(slug, 'counted')
      const now = stack.clock!.now()
      const window = { startTime: now - 3 * 3_600_000, endTime: now + 3_600_000 }
      const answer = await asCustomer('portal.getVerifications', headers, window)
      expect(answer.status, answer.raw).toBe(200)
      const points: { total: number; valid: number; insufficientPermissions: number; time: number }[] = answer.body.data
      // Zero-filled: a bucket per hour of the window.
      expect(points).toHaveLength(4)
      expect(points.map((p) => p.time)).toEqual([...points.map((p) => p.time)].sort((a, b) => a - b))
      expect(points.reduce((sum, p) => sum + p.total, 0)).toBe(4)
      expect(points.reduce((sum, p) => sum + p.valid, 0)).toBe(3)
      expect(points.reduce((sum, p) => sum + p.insufficientPermissions, 0)).toBe(1)
      // Per key, for named keys: another customer's key counts nothing, as one that does not exist.
      const perKey = await asCustomer('portal.getVerifications', headers, {
        ...window,
        keyIds: [own.keyId, second.keyId, other.keyId],
        perKey: true,
      })
      expect(perKey.status, perKey.raw).toBe(200)
      const byKey = new Map<string, number>()
      for (const row of perKey.body.data as { keyId: string; total: number }[])
        byKey.set(row.keyId, (byKey.get(row.keyId) ?? 0) + row.total)
      expect(Object.fromEntries(byKey)).toEqual({ [own.keyId]: 3, [second.keyId]: 1 })
      // Named keys only, summed.
      const named = await asCustomer('portal.getVerifications', headers, { ...window, keyIds: [second.keyId] })
      expect(named.body.data.reduce((sum: number, p: { total: number }) => sum + p.total, 0)).toBe(1)
      const theirs = await asCustomer('portal.getVerifications', headers, { ...window, keyId: other.keyId })
      expect(theirs.body.data.reduce((sum: number, p: { total: number }) => sum + p.total, 0)).toBe(0)
      // A deleted key's past verifications stay the customer's.
      expect((await v2('keys.deleteKey', { keyId: own.keyId })).status).toBe(200)
      const after = await asCustomer('portal.getVerifications', headers, window)
      expect(after.body.data.reduce((sum: number, p: { total: number }) => sum + p.total, 0)).toBe(4)
      const wide = await asCustomer('portal.getVerifications', headers, {
        startTime: now - 366 * 86_400_000,
        endTime: now,
      })
      expect(wide.status).toBe(400)
      const tooMany = await asCustomer('portal.getVerifications', headers, {
        ...window,
        keyIds: Array.from({ length: 101 }, (_, i) => `key_${i}`),
      })
      expect(tooMany.status).toBe(400)
      const noScope = await signIn(slug, 'counted', ['keys:read'])
      expect((await asCustomer('portal.getVerifications', noScope.headers, window)).status).toBe(403)
    })

    it('answers a short window further back than the hours are kept by the day, from the daily rollup', async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      const old = await newKey(apiId, 'long-ago')
      const then = Math.floor((stack.clock!.now() - 100 * 86_400_000) / 86_400_000) * 86_400_000 + 12 * 3_600_000
      await stack.engine!.insert(
        'key_verifications_v1',
        [
          {
            request_id: `req_long_ago_${stack.store}`,
            time: then,
            workspace_id: 'ws_keygate',
            key_space_id: apiId,
            identity_id: '',
            external_id: 'long-ago',
            key_id: old.keyId,
            outcome: 'VALID',
            tags: [],
            source: 'v1.verifyKey',
            region: 'test',
            spent_credits: 0,
            latency: 0,
          },
        ],
        `long-ago-${stack.store}`,
      )
      const { headers } = await signIn(slug, 'long-ago')
      const answer = await asCustomer('portal.getVerifications', headers, {
        startTime: then - 3_600_000,
        endTime: then + 3_600_000,
      })
      expect(answer.status, answer.raw).toBe(200)
      const points = answer.body.data as { time: number; total: number }[]
      expect(points.map((p) => p.time)).toEqual([then - 12 * 3_600_000])
      expect(points[0]!.total).toBe(1)
    })

    it('shows when each key was last verified, from the analytics rows', async () => {
      const apiId = await newApi()
      const { slug } = await newPortal([apiId])
      const used = await newKey(apiId, 'last-used')
      const unused = await newKey(apiId, 'last-used')
      await stack.verify({ key: used.key })
      await stack.ingestAnalytics()
      const { headers } = await signIn(slug, 'last-used')
      const listed = await asCustomer('portal.listKeys', headers, {})
      expect(listed.status, listed.raw).toBe(200)
      const lastUsed = Object.fromEntries(
        (listed.body.data as { keyId: string; lastUsedAt?: number }[]).map((key) => [key.keyId, key.lastUsedAt]),
      )
      expect(lastUsed[used.keyId]).toBe(stack.clock!.now())
      expect(lastUsed[unused.keyId]).toBeUndefined()
    })
  })

  describe('portals through the API', () => {
    it('creates, reads, updates and deletes a portal; refuses a taken slug, an unknown api, bad defaults', async () => {
      const apiId = await newApi()
      const { portalId, slug } = await newPortal([apiId])
      const read = await v2('portal.getPortal', { portal: slug })
      expect(read.body.data).toMatchObject({ portalId, slug, apiIds: [apiId], enabled: true, maxKeysPerIdentity: 20 })
      expect((await v2('portal.createPortal', { slug, name: 'again', apiIds: [apiId] })).status).toBe(409)
      expect((await v2('portal.createPortal', { slug: 'unknown-api', name: 'x', apiIds: ['api_nope'] })).status).toBe(
        404,
      )
      const badDefaults = await v2('portal.createPortal', {
        slug: 'bad-defaults',
        name: 'x',
        apiIds: [apiId],
        keyDefaults: { credits: { remaining: 5, refill: { interval: 'monthly', amount: 5 } } },
      })
      expect(badDefaults.status, badDefaults.raw).toBe(400)
      expect((await v2('portal.createPortal', { slug: 'Bad Slug', name: 'x', apiIds: [apiId] })).status).toBe(400)
      expect(
        (await v2('portal.createPortal', { slug: 'http-logo', name: 'x', apiIds: [apiId], logoUrl: 'http://a/b.png' }))
          .status,
      ).toBe(400)
      const updated = await v2('portal.updatePortal', {
        portal: portalId,
        name: 'Renamed',
        logoUrl: 'https://a.example/l.svg',
      })
      expect(updated.body.data).toMatchObject({ name: 'Renamed', logoUrl: 'https://a.example/l.svg' })
      // Apis are checked on update as on create: each must exist, and be one the root key may read.
      expect((await v2('portal.updatePortal', { portal: portalId, apiIds: [apiId, 'api_nope'] })).status).toBe(404)
      const otherApi = await newApi()
      const narrow = await rootKeyWith([`portal.${portalId}.update_portal`, `api.${apiId}.read_api`])
      const widened = await v2('portal.updatePortal', { portal: portalId, apiIds: [apiId, otherApi] }, narrow)
      expect(widened.status, widened.raw).toBe(404)
      expect((await v2('portal.getPortal', { portal: portalId })).body.data.apiIds).toEqual([apiId])
      const cleared = await v2('portal.updatePortal', { portal: portalId, logoUrl: null })
      expect(cleared.body.data).not.toHaveProperty('logoUrl')
      expect((await v2('portal.deletePortal', { portal: portalId })).status).toBe(200)
      expect((await v2('portal.getPortal', { portal: portalId })).status).toBe(404)
    })

    it("refuses key defaults as v2's keys.createKey refuses a key, in its words, on create and on update", async () => {
      const apiId = await newApi()
      const { portalId } = await newPortal([apiId], { keyDefaults: { credits: { remaining: 5 } } })
      const limit = { name: 'requests', limit: 1, duration: 60_000 }
      const cases: [object, string, string][] = [
        [
          { credits: { remaining: 5, refill: { interval: 'monthly', amount: 5 } } },
          'body.credits.refill.refillDay',
          'must be given when the refill interval is monthly',
        ],
        [
          { credits: { remaining: 5, refill: { interval: 'daily', amount: 5, refillDay: 3 } } },
          'body.credits.refill.refillDay',
          'must not be given when the refill interval is daily',
        ],
        [{ ratelimits: [limit, limit] }, 'body', 'Ratelimit with name "requests" is already defined in the request'],
      ]
      for (const [keyDefaults, location, message] of cases) {
        for (const refused of [
          await v2('portal.createPortal', { slug: `defaults-${++slugs}`, name: 'x', apiIds: [apiId], keyDefaults }),
          await v2('portal.updatePortal', { portal: portalId, keyDefaults }),
        ]) {
          expect({ keyDefaults, status: refused.status, errors: refused.body.error.errors }).toEqual({
            keyDefaults,
            status: 400,
            errors: [{ location, message }],
          })
        }
      }
      expect((await v2('portal.getPortal', { portal: portalId })).body.data.keyDefaults).toEqual({
        credits: { remaining: 5 },
      })
    })

    it('hides a portal from a root key without rights on it (404) and needs create_portal to make one (403)', async () => {
      const apiId = await newApi()
      const { portalId } = await newPortal([apiId])
      const stranger = await rootKeyWith(['api.*.*'])
      expect((await v2('portal.getPortal', { portal: portalId }, stranger)).status).toBe(404)
      expect(
        (await v2('portal.createPortal', { slug: 'stranger-portal', name: 'x', apiIds: [apiId] }, stranger)).status,
      ).toBe(403)
      const reader = await rootKeyWith([`portal.${portalId}.read_portal`])
      expect((await v2('portal.getPortal', { portal: portalId }, reader)).status).toBe(200)
      expect((await v2('portal.updatePortal', { portal: portalId, name: 'y' }, reader)).status).toBe(404)
      const maker = await rootKeyWith(['portal.*.create_portal'])
      expect(
        (await v2('portal.createPortal', { slug: 'maker-portal', name: 'x', apiIds: [apiId] }, maker)).status,
      ).toBe(404)
    })
  })

  it('never writes a code, a token or a key into the audit log', async () => {
    const apiId = await newApi()
    const { slug } = await newPortal([apiId])
    const { headers, token } = await signIn(slug, 'secretive')
    const created = await asCustomer('portal.createKey', headers, {})
    const audit = (
      await stack.controlPlane.app.inject({ method: 'GET', url: '/v1/audit.list', headers: ADMIN_HEADERS })
    ).body
    expect(audit).not.toContain(token)
    expect(audit).not.toContain(created.body.data.key)
    expect(audit).not.toMatch(/pst_[1-9A-Za-z]{20}/)
    expect(createHash('sha256').update(token).digest('base64')).toBe(hashKey(token))
  })
})
