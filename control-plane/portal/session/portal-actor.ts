import type { AuditActor } from '../../audit/audit-log.js'
import type { PortalCaller } from './portal-caller.js'

/**
 * Who a portal call's audit entries name: the session and its customer, under the root key that minted the session
 * (the authority the session acts with).
 */
export const portalActor = (caller: PortalCaller): AuditActor => ({
  rootKeyId: caller.session.mintedBy,
  requestId: caller.requestId,
  portalSession: {
    id: caller.session.id,
    portalId: caller.session.portalId,
    externalId: caller.session.externalId,
  },
})
