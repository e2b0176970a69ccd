import type { IncomingHttpHeaders } from 'node:http'
import type { GatewayPolicy } from '../shared/config/settings.js'
import type { VerifyRequest } from '../shared/verification/verification.js'
import type { VerificationSource } from '../shared/verification/verification-source.js'

export const OVERRIDE_HEADERS = {
  apiId: 'x-keygate-api-id',
  permissions: 'x-keygate-permissions',
  cost: 'x-keygate-cost',
} as const

export interface GatewayCheck {
  /** The key, or undefined when the request carries none. */
  key: string | undefined
  /** Which header carried it (the proxy strips it before forwarding). */
  keyFrom: 'header' | 'authorization' | undefined
  /**
   * Neither the gateway nor the policy names an api, and the policy does not accept every api: the request must be
   * refused (API_ID_REQUIRED) rather than checked against every api.
   */
  noApi: boolean
  request: VerifyRequest
  cost: number
}

const BEARER = /^Bearer\s+(\S+)\s*$/i
const MAX_KEY_LENGTH = 1024

/**
 * Reads the key and the policy for one request. With `trustOverrides` (forward-auth: the request comes from a
 * gateway, which must set or clear them, as every README configuration does) X-Keygate-* headers override
 * the policy; without it (the reverse proxy: the request comes straight from a client) they are ignored.
 * A blank override counts as absent.
 */
export function readGatewayRequest(
  headers: IncomingHttpHeaders,
  policy: GatewayPolicy,
  trustOverrides: boolean,
): GatewayCheck {
  const { key, keyFrom } = readGatewayKey(headers, policy)
  if (!trustOverrides) return { key, keyFrom, ...policyRequest(policy) }
  const override = (name: string) => single(headers[name])?.trim() || undefined
  const apiId = override(OVERRIDE_HEADERS.apiId) ?? policy.apiId
  const permissionsHeader = override(OVERRIDE_HEADERS.permissions)
  const listed = permissionsHeader === undefined ? undefined : splitList(permissionsHeader)
  const permissions = listed && listed.length > 0 ? listed : policy.permissions
  const costHeader = override(OVERRIDE_HEADERS.cost)
  const cost = costHeader !== undefined && /^\d{1,6}$/.test(costHeader) ? Number(costHeader) : policy.cost
  return { key, keyFrom, ...checkOf(policy, apiId, permissions, cost, 'authorize') }
}

/** The key a request carries and where it came from: the policy's key header first, then `Authorization: Bearer`. */
export function readGatewayKey(
  headers: IncomingHttpHeaders,
  policy: GatewayPolicy,
): Pick<GatewayCheck, 'key' | 'keyFrom'> {
  const fromHeader = single(headers[policy.keyHeader])?.trim()
  const bearer = fromHeader ? undefined : BEARER.exec(single(headers.authorization) ?? '')?.[1]
  const key = fromHeader || bearer
  return {
    key: key && key.length <= MAX_KEY_LENGTH ? key : undefined,
    keyFrom: fromHeader ? 'header' : bearer ? 'authorization' : undefined,
  }
}

const ofPolicy = new WeakMap<GatewayPolicy, Omit<GatewayCheck, 'key' | 'keyFrom'>>()

/**
 * What a request is checked against when no header may override the policy (the reverse proxy): the policy's alone,
 * the same for every request, so built once per policy (a frozen request: verdicts may be memoised against it).
 */
export function policyRequest(policy: GatewayPolicy): Omit<GatewayCheck, 'key' | 'keyFrom'> {
  let check = ofPolicy.get(policy)
  if (check === undefined) {
    const built = checkOf(policy, policy.apiId, policy.permissions, policy.cost, 'proxy')
    check = Object.freeze({ ...built, request: Object.freeze(built.request) })
    ofPolicy.set(policy, check)
  }
  return check
}

function checkOf(
  policy: GatewayPolicy,
  apiId: string | undefined,
  permissions: readonly string[] | undefined,
  cost: number,
  source: VerificationSource,
): Omit<GatewayCheck, 'key' | 'keyFrom'> {
  return {
    noApi: apiId === undefined && policy.anyApi !== true,
    request: {
      apiId,
      cost,
      source,
      ...(permissions && permissions.length > 0 ? { permissions: { and: [...permissions] } } : {}),
    },
    cost,
  }
}

const single = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)
export const splitList = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
