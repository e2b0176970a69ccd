import { describe, expect, it } from 'vitest'
import { hrefOf, parseRoute } from '../../console/src/route.js'

/** The console's routes, read from the URL's fragment (whatever the address bar holds) and written for links. */
describe("the console's router", () => {
  it('reads the pages and the ids its links write, decoded', () => {
    // The landing page: usage across every api.
    expect(parseRoute('')).toEqual({ page: 'overview' })
    expect(parseRoute('#/')).toEqual({ page: 'overview' })
    expect(parseRoute('#/overview')).toEqual({ page: 'overview' })
    expect(parseRoute('#/apis')).toEqual({ page: 'apis' })
    expect(parseRoute('#/audit')).toEqual({ page: 'audit' })
    expect(parseRoute('#/apis/api_1')).toEqual({ page: 'keys', apiId: 'api_1' })
    expect(parseRoute(hrefOf({ page: 'audit', keyId: 'key_1/x %' }))).toEqual({ page: 'audit', keyId: 'key_1/x %' })
    expect(hrefOf({ page: 'audit' })).toBe('#/audit')
    // Anything else after #/audit is the whole log, as an unknown page is the overview.
    expect(parseRoute('#/nothing-here')).toEqual({ page: 'overview' })
    expect(parseRoute('#/audit/keys/')).toEqual({ page: 'audit' })
    expect(parseRoute('#/audit/other')).toEqual({ page: 'audit' })
    expect(parseRoute(hrefOf({ page: 'namespace', name: 'e-mail/sends %' }))).toEqual({
      page: 'namespace',
      name: 'e-mail/sends %',
    })
    expect(parseRoute('#/webhooks')).toEqual({ page: 'webhooks' })
    expect(parseRoute('#/identities')).toEqual({ page: 'identities' })
    expect(hrefOf({ page: 'identity', identityId: 'id_1' })).toBe('#/identities/id_1')
    expect(parseRoute(hrefOf({ page: 'identity', identityId: "id_1/x %'" }))).toEqual({
      page: 'identity',
      identityId: "id_1/x %'",
    })
    expect(hrefOf({ page: 'webhook', endpointId: 'whep_1' })).toBe('#/webhooks/whep_1')
    expect(parseRoute(hrefOf({ page: 'webhook', endpointId: 'whep_1/x %' }))).toEqual({
      page: 'webhook',
      endpointId: 'whep_1/x %',
    })
  })

  it('answers a fragment that does not decode with a not-found page, not an exception that blanks the app', () => {
    for (const hash of ['#/apis/%E0', '#/keys/%', '#/ratelimits/a%2', '#/apis/%C3%28', '#/webhooks/%E0'])
      expect(parseRoute(hash), hash).toEqual({ page: 'not-found', hash })
    expect(hrefOf({ page: 'not-found', hash: '#/apis/%E0' })).toBe('#/apis/%E0')
  })
})
