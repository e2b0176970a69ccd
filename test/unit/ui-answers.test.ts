import type { Static, TSchema } from 'typebox'
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { ConsoleAnswers } from '../../shared/console-answers.js'
import type { PortalAnswer, PortalAnswers } from '../../shared/portal-answers.js'
import type { V2PagedEnvelope } from '../../shared/http/v2-route.js'
import type { ManagementRoute } from '../../control-plane/http/management-route.js'
import type { PortalSessionRoute } from '../../control-plane/portal/wire/portal-session-route.js'
import {
  createKeyRoute,
  exchangeCodeRoute,
  getSessionRoute,
  getVerificationsRoute,
  getUsageThresholdsRoute,
  listKeysRoute,
  rerollKeyRoute,
  revokeKeyRoute,
  signOutRoute,
} from '../../control-plane/portal/session/session-routes.v2.js'
import { createApiV1 } from '../../control-plane/apis/create-api.v1.js'
import { deleteApiV1 } from '../../control-plane/apis/delete-api.v1.js'
import { getApiV1 } from '../../control-plane/apis/get-api.v1.js'
import { listApisV1 } from '../../control-plane/apis/list-apis.v1.js'
import { listKeysV1 } from '../../control-plane/apis/list-keys.v1.js'
import { listAuditV1 } from '../../control-plane/audit/list.v1.js'
import { createIdentityV1 } from '../../control-plane/identities/create-identity.v1.js'
import { deleteIdentityV1 } from '../../control-plane/identities/delete-identity.v1.js'
import { getIdentityV1 } from '../../control-plane/identities/get-identity.v1.js'
import { listIdentitiesV1 } from '../../control-plane/identities/list-identities.v1.js'
import { updateIdentityV1 } from '../../control-plane/identities/update-identity.v1.js'
import { createKeyV1 } from '../../control-plane/keys/create-key.v1.js'
import { deleteKeyV1 } from '../../control-plane/keys/delete-key.v1.js'
import { getKeyV1 } from '../../control-plane/keys/get-key.v1.js'
import { getVerificationsV1 } from '../../control-plane/keys/get-verifications.v1.js'
import { rerollKeyV1 } from '../../control-plane/keys/reroll-key.v1.js'
import { updateKeyV1 } from '../../control-plane/keys/update-key.v1.js'
import { createPermissionV1 } from '../../control-plane/permissions/create-permission.v1.js'
import { createRoleV1 } from '../../control-plane/permissions/create-role.v1.js'
import { deletePermissionV1 } from '../../control-plane/permissions/delete-permission.v1.js'
import { deleteRoleV1 } from '../../control-plane/permissions/delete-role.v1.js'
import { listPermissionsV1 } from '../../control-plane/permissions/list-permissions.v1.js'
import { listRolesV1 } from '../../control-plane/permissions/list-roles.v1.js'
import { setRolePermissionsV1 } from '../../control-plane/permissions/set-role-permissions.v1.js'
import { deleteOverrideV1 } from '../../control-plane/ratelimits/delete-override.v1.js'
import { listNamespacesV1 } from '../../control-plane/ratelimits/list-namespaces.v1.js'
import { listOverridesV1 } from '../../control-plane/ratelimits/list-overrides.v1.js'
import { setOverrideV1 } from '../../control-plane/ratelimits/set-override.v1.js'
import { createRootKeyV1 } from '../../control-plane/root-keys/create-root-key.v1.js'
import { listRootKeysV1 } from '../../control-plane/root-keys/list-root-keys.v1.js'
import { revokeRootKeyV1 } from '../../control-plane/root-keys/revoke-root-key.v1.js'
import { createEndpointV1 } from '../../control-plane/webhooks/create-endpoint.v1.js'
import { deleteEndpointV1 } from '../../control-plane/webhooks/delete-endpoint.v1.js'
import { getEndpointV1 } from '../../control-plane/webhooks/get-endpoint.v1.js'
import { listAttemptsV1 } from '../../control-plane/webhooks/list-attempts.v1.js'
import { listEndpointsV1 } from '../../control-plane/webhooks/list-endpoints.v1.js'
import { replayV1 } from '../../control-plane/webhooks/replay.v1.js'
import { rotateSecretV1 } from '../../control-plane/webhooks/rotate-secret.v1.js'
import { sendTestV1 } from '../../control-plane/webhooks/send-test.v1.js'
import { updateEndpointV1 } from '../../control-plane/webhooks/update-endpoint.v1.js'

/**
 * The console and the portal read the API's answers as shared/ declares them (console-answers.ts, portal-answers.ts,
 * copied into the pages by the build): these checks hold each declaration to the schema its route answers by, so a
 * field the wire gains, loses or changes fails the type-check (`npm run typecheck`) until the declaration follows.
 */

/** The v1 route of each operation the console calls. */
const CONSOLE_ROUTES = {
  'apis.createApi': createApiV1,
  'apis.deleteApi': deleteApiV1,
  'apis.getApi': getApiV1,
  'apis.listApis': listApisV1,
  'apis.listKeys': listKeysV1,
  'audit.list': listAuditV1,
  'identities.createIdentity': createIdentityV1,
  'identities.deleteIdentity': deleteIdentityV1,
  'identities.getIdentity': getIdentityV1,
  'identities.listIdentities': listIdentitiesV1,
  'identities.updateIdentity': updateIdentityV1,
  'keys.createKey': createKeyV1,
  'keys.deleteKey': deleteKeyV1,
  'keys.getKey': getKeyV1,
  'keys.getVerifications': getVerificationsV1,
  'keys.rerollKey': rerollKeyV1,
  'keys.updateKey': updateKeyV1,
  'permissions.createPermission': createPermissionV1,
  'permissions.createRole': createRoleV1,
  'permissions.deletePermission': deletePermissionV1,
  'permissions.deleteRole': deleteRoleV1,
  'permissions.listPermissions': listPermissionsV1,
  'permissions.listRoles': listRolesV1,
  'permissions.setRolePermissions': setRolePermissionsV1,
  'ratelimits.deleteOverride': deleteOverrideV1,
  'ratelimits.listNamespaces': listNamespacesV1,
  'ratelimits.listOverrides': listOverridesV1,
  'ratelimits.setOverride': setOverrideV1,
  'rootKeys.createRootKey': createRootKeyV1,
  'rootKeys.listRootKeys': listRootKeysV1,
  'rootKeys.revokeRootKey': revokeRootKeyV1,
  'webhooks.createEndpoint': createEndpointV1,
  'webhooks.deleteEndpoint': deleteEndpointV1,
  'webhooks.getEndpoint': getEndpointV1,
  'webhooks.listAttempts': listAttemptsV1,
  'webhooks.listEndpoints': listEndpointsV1,
  'webhooks.replay': replayV1,
  'webhooks.rotateSecret': rotateSecretV1,
  'webhooks.sendTest': sendTestV1,
  'webhooks.updateEndpoint': updateEndpointV1,
} satisfies { [Operation in keyof ConsoleAnswers]: ManagementRoute }

/** The route of each method the portal's page calls. */
const PORTAL_ROUTES = {
  exchangeCode: exchangeCodeRoute,
  getSession: getSessionRoute,
  listKeys: listKeysRoute,
  createKey: createKeyRoute,
  rerollKey: rerollKeyRoute,
  revokeKey: revokeKeyRoute,
  getVerifications: getVerificationsRoute,
  getUsageThresholds: getUsageThresholdsRoute,
  signOut: signOutRoute,
} satisfies { [Method in keyof PortalAnswers]: PortalSessionRoute }

type AnswerOf<Route> = Route extends ManagementRoute<infer Answer> ? Static<Answer> : never
type DataOf<Route> = Route extends PortalSessionRoute<TSchema, infer Data> ? Static<Data> : never

describe("the shapes the pages read of the API's answers", () => {
  it("are the console's routes' answers, operation by operation", () => {
    expectTypeOf<ConsoleAnswers>().toEqualTypeOf<{
      [Operation in keyof typeof CONSOLE_ROUTES]: AnswerOf<(typeof CONSOLE_ROUTES)[Operation]>
    }>()
    for (const [operation, route] of Object.entries(CONSOLE_ROUTES)) expect(route.id).toBe(operation)
  })

  it("are the portal's routes' data, method by method, in v2's envelope", () => {
    expectTypeOf<PortalAnswers>().toEqualTypeOf<{
      [Method in keyof typeof PORTAL_ROUTES]: DataOf<(typeof PORTAL_ROUTES)[Method]>
    }>()
    expectTypeOf<PortalAnswer<PortalAnswers['listKeys']>>().toEqualTypeOf<
      Static<ReturnType<typeof V2PagedEnvelope<typeof listKeysRoute.data>>>
    >()
    for (const [method, route] of Object.entries(PORTAL_ROUTES)) expect(route.operation).toBe(`portal.${method}`)
  })
})
