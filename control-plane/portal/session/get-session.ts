import type { PortalScope } from '../../../shared/portal/portal.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { PortalCaller } from './portal-caller.js'
import { sessionApis } from './session-keys.js'

export interface PortalSessionView {
  sessionId: string
  externalId: string
  scopes: PortalScope[]
  expiresAt: number
  preview: boolean
  returnUrl?: string
  portal: { name: string; logoUrl?: string; accentColor?: string }
  apis: { id: string; name: string }[]
}

/** What the page needs of its session: who, what it may do, until when, the branding, the apis by name. */
export async function getSession(
  deps: Pick<ControlPlaneDeps, 'store'>,
  caller: PortalCaller,
): Promise<PortalSessionView> {
  const { session, portal } = caller
  const apis = await Promise.all(
    sessionApis(caller).map(async (id) => ({ id, name: (await deps.store.keys.getApi(id))?.name ?? id })),
  )
  return {
    sessionId: session.id,
    externalId: session.externalId,
    scopes: session.scopes,
    expiresAt: session.tokenExpiresAt ?? session.codeExpiresAt,
    preview: session.preview,
    ...(session.returnUrl !== undefined ? { returnUrl: session.returnUrl } : {}),
    portal: {
      name: portal.name,
      ...(portal.logoUrl !== undefined ? { logoUrl: portal.logoUrl } : {}),
      ...(portal.accentColor !== undefined ? { accentColor: portal.accentColor } : {}),
    },
    apis,
  }
}
