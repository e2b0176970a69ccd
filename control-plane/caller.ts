import type { Logger } from 'pino'
import type { Principal } from '../shared/root-keys/root-key-principal.js'

/**
 * Who makes a management call, as operations see it: the root key's principal (what it may do), the request's id
 * (audit entries carry it) and a logger bound to the request. Nothing of HTTP: routes make it from their request
 * (control-plane/http/management-route.ts), and an operation runs the same whichever wire format called it.
 */
export interface Caller {
  principal: Principal
  requestId: string
  log: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>
}
