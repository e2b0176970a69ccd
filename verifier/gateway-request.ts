import type { IncomingHttpHeaders } from 'node:http'
import type { GatewayPolicy } from '../shared/config/settings.js'
import type { VerifyRequest } from '../shared/verification.js'

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
  const fromHeader = single(headers[policy.keyHeader])?.trim()
  const bearer = BEARER.exec(single(headers.authorization) ?? '')?.[1]
  const key = fromHeader || bearer
  const keyFrom = fromHeader ? 'header' : bearer ? 'authorization' : undefined
  const override = (name: string) => (trustOverrides ? single(headers[name])?.trim() || undefined : undefined)
  const apiId = override(OVERRIDE_HEADERS.apiId) ?? policy.apiId
  const permissionsHeader = override(OVERRIDE_HEADERS.permissions)
  const listed = permissionsHeader === undefined ? undefined : splitList(permissionsHeader)
  const permissions = listed && listed.length > 0 ? listed : policy.permissions
  const costHeader = override(OVERRIDE_HEADERS.cost)
  const cost = costHeader !== undefined && /^\d{1,6}$/.test(costHeader) ? Number(costHeader) : policy.cost
  return {
    key: key && key.length <= MAX_KEY_LENGTH ? key : undefined,
    keyFrom,
    noApi: apiId === undefined && policy.anyApi !== true,
    request: {
      apiId,
      cost,
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
