import type { Logger } from 'pino'
import type { PortalSession } from '../../../shared/portal/portal.js'
import type { PortalRecord } from '../portal-record.js'

/**
 * Who makes a portal call, as the portal's operations see it: a live session of an enabled portal (checked on every
 * request: a revoked session or a disabled portal stops at once), the request's id and a logger bound to it. The
 * session is the whole authority: its identity, its apis, its scopes.
 */
export interface PortalCaller {
  session: PortalSession
  portal: PortalRecord
  requestId: string
  log: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>
}
