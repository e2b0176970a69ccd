import type { ManagementRoute } from '../http/management-route.js'
import { listAuditV1 } from './list.v1.js'

/** The audit service: Keygate's own, in v1 style only. */
export const AUDIT_ROUTES: readonly ManagementRoute[] = [listAuditV1]
