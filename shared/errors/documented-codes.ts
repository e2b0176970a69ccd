import { ERROR_DOCS, type ErrorDoc } from './error-docs.js'
import { ERRORS, type ErrorCode } from './errors.js'
import { GATEWAY_CODES, type GatewayRefusalCode } from './gateway-codes.js'
import { GATEWAY_ERROR_DOCS } from './gateway-error-docs.js'

/**
 * Every code an error body can carry, and so link to: the error table's, and a gateway's refusals (the reverse
 * proxy's bodies, /v1/authorize's API_ID_REQUIRED). error-body.ts takes no other; each has a page.
 */
export type DocumentedCode = ErrorCode | GatewayRefusalCode

/** The one table of pages: the error table's codes first, in its order, then the gateway's own. */
export const CODE_DOCS: Readonly<Record<DocumentedCode, ErrorDoc>> = { ...ERROR_DOCS, ...GATEWAY_ERROR_DOCS }

export const DOCUMENTED_CODES = Object.freeze(Object.keys(CODE_DOCS) as DocumentedCode[])

// The two tables, each by the codes it may hold: a code's status is read from each without a cast.
const TABLE_STATUS: Partial<Record<DocumentedCode, number>> = ERRORS
const GATEWAY_STATUS: Partial<Record<DocumentedCode, number>> = GATEWAY_CODES

/**
 * The statuses a code is answered with, as its page heads them: `404`, or `404 (a gateway: 401)` for a code a gateway
 * answers with another status than the error table's.
 */
export function statusesOf(code: DocumentedCode): string {
  const table = TABLE_STATUS[code]
  const gateway = GATEWAY_STATUS[code]
  if (table === undefined) return String(gateway)
  return gateway === undefined || gateway === table ? String(table) : `${table} (a gateway: ${gateway})`
}
