import { Type } from 'typebox'
import { v2Pagination } from '../../../shared/http/v2-route.js'
import { PORTAL_SCOPES } from '../../../shared/portal/portal.js'
import { StringEnum } from '../../../shared/http/schema-docs.js'
import type { PortalCaller } from './portal-caller.js'
import { portalSessionRoute, type PortalSessionRoute } from '../wire/portal-session-route.js'
import { KeyIdField } from '../../wire/fields.js'
import { KeyData, NewKeyData, toKeyData } from '../../keys/wire/key-data.v2.js'
import { Name } from '../../keys/wire/key-bodies.v2.js'
import { createPortalKey } from './create-key.js'
import { exchangeCode } from './exchange-code.js'
import { getSession } from './get-session.js'
import { getPortalVerifications, MAX_KEY_IDS } from './get-verifications.js'
import { getPortalUsageThresholds } from './get-usage-thresholds.js'
import { USAGE_MEASURES, USAGE_PERIODS } from '../../../shared/usage-threshold.js'
import { listPortalKeys } from './list-keys.js'
import { rerollPortalKey } from './reroll-key.js'
import { revokePortalKey } from './revoke-key.js'
import { signOut } from './sign-out.js'

const TAG = 'v2 portal' as const
const COOKIE_ONLY = 'Authenticated by the `portal_session` cookie alone (exchangeCode sets it); never a root key.'

/** The caller of a route that takes the session (the registrar authenticated it). */
const sessionOf = (caller: PortalCaller | undefined): PortalCaller => {
  if (!caller) throw new Error('a portal session route ran without its session')
  return caller
}

const Empty = Type.Object({}, { additionalProperties: false })
const Unix = (description: string) => Type.Integer({ minimum: 0, maximum: 9_999_999_999_999, description })

export const exchangeCodeRoute = portalSessionRoute({
  operation: 'portal.exchangeCode',
  doc: {
    summary: "Exchange a session's one-time code for its access token (and the session cookie)",
    description:
      'No authentication: the code is the proof, and works once. Answers the token (Unkey’s wire) and sets it as the `portal_session` cookie (HttpOnly, SameSite=Strict, Secure over https).',
    tag: TAG,
  },
  body: Type.Object(
    { code: Type.String({ minLength: 1, maxLength: 128, description: 'The `code` of the portal URL (`pst_…`)' }) },
    { additionalProperties: false },
  ),
  data: Type.Object({
    accessToken: Type.String({ description: 'The session’s token (`pat_…`): also set as the cookie' }),
    expiresAt: Unix('When the token expires (24 hours), unix ms'),
  }),
  session: false,
  handle: async ({ code }, _caller, deps) => {
    const { token, session } = await exchangeCode(deps, code)
    const expiresAt = session.tokenExpiresAt!
    return { data: { accessToken: token, expiresAt }, cookie: { token, expiresAt } }
  },
})

export const getSessionRoute = portalSessionRoute({
  operation: 'portal.getSession',
  doc: { summary: 'The session: its customer, scopes, expiry, branding and apis', description: COOKIE_ONLY, tag: TAG },
  body: Empty,
  data: Type.Object({
    sessionId: Type.String({ description: 'The session (`ps_…`)' }),
    externalId: Type.String({ description: 'The customer' }),
    scopes: Type.Array(StringEnum([...PORTAL_SCOPES]), { description: 'What the customer may do' }),
    expiresAt: Unix('When the session ends, unix ms'),
    preview: Type.Boolean({ description: 'A session for trying the portal out' }),
    returnUrl: Type.Optional(Type.String({ description: 'Where the page’s “Back” link goes' })),
    portal: Type.Object(
      {
        name: Type.String({ description: 'The page title' }),
        logoUrl: Type.Optional(Type.String({ description: 'The logo (https)' })),
        accentColor: Type.Optional(Type.String({ description: 'The accent colour, `#rrggbb`' })),
      },
      { description: "The portal's branding" },
    ),
    apis: Type.Array(
      Type.Object({
        id: Type.String({ description: "The api's id" }),
        name: Type.String({ description: 'Its name' }),
      }),
      { description: 'The apis the session reaches' },
    ),
  }),
  session: true,
  handle: async (_body, caller, deps) => ({ data: await getSession(deps, sessionOf(caller)) }),
})

const PortalKeyData = Type.Object({
  ...KeyData.properties,
  apiId: Type.String({ description: 'The api it belongs to' }),
  lastUsedAt: Type.Optional(Unix('When it was last verified, unix ms (within the 90 days verifications are kept)')),
})

export const listKeysRoute = portalSessionRoute({
  operation: 'portal.listKeys',
  doc: { summary: "The customer's keys in the session's apis, a page at a time", description: COOKIE_ONLY, tag: TAG },
  body: Type.Object(
    {
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Keys per page (default 100)' })),
      cursor: Type.Optional(Type.String({ maxLength: 64, description: "The previous page's `pagination.cursor`" })),
    },
    { additionalProperties: false },
  ),
  data: Type.Array(PortalKeyData, { maxItems: 100 }),
  paged: true,
  session: true,
  handle: async ({ limit = 100, cursor }, caller, deps) => {
    const page = await listPortalKeys(deps, sessionOf(caller), { limit, cursor })
    return {
      data: page.keys.map(({ record, context, lastUsedAt }) => ({
        ...toKeyData(record, context),
        apiId: record.apiId,
        ...(lastUsedAt !== undefined ? { lastUsedAt } : {}),
      })),
      pagination: v2Pagination(page.cursor),
    }
  },
})

export const createKeyRoute = portalSessionRoute({
  operation: 'portal.createKey',
  doc: {
    summary: 'Create a key for the customer, with the portal’s defaults (shown once)',
    description: `Keygate's own. ${COOKIE_ONLY} Needs the scope keys:create.`,
    tag: TAG,
  },
  body: Type.Object(
    {
      apiId: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 64,
          description: 'Which of the session’s apis (needed when it has several)',
        }),
      ),
      name: Type.Optional(Name),
    },
    { additionalProperties: false },
  ),
  data: NewKeyData,
  session: true,
  handle: async (body, caller, deps) => ({ data: await createPortalKey(deps, sessionOf(caller), body) }),
})

export const rerollKeyRoute = portalSessionRoute({
  operation: 'portal.rerollKey',
  doc: {
    summary: 'Roll one of the customer’s keys; the old one works for `expiration` ms more (shown once)',
    description: `${COOKIE_ONLY} Needs the scope keys:reroll. At most 7 days of overlap; once it ends, the old key is deleted. A key is rolled once: rolling it again while its replacement exists is a 409.`,
    tag: TAG,
  },
  body: Type.Object({
    keyId: KeyIdField('The key to roll'),
    expiration: Type.Integer({
      minimum: 0,
      maximum: 4_102_444_800_000,
      description: 'Overlap: the old key works this many ms more',
    }),
  }),
  data: NewKeyData,
  session: true,
  handle: async (body, caller, deps) => ({ data: await rerollPortalKey(deps, sessionOf(caller), body) }),
})

export const revokeKeyRoute = portalSessionRoute({
  operation: 'portal.revokeKey',
  doc: {
    summary: 'Revoke one of the customer’s keys (deleted: it stops verifying within the revocation bound)',
    description: `Keygate's own. ${COOKIE_ONLY} Needs the scope keys:revoke.`,
    tag: TAG,
  },
  body: Type.Object({ keyId: KeyIdField('The key to revoke') }, { additionalProperties: false }),
  data: Type.Object({}),
  session: true,
  handle: async ({ keyId }, caller, deps) => {
    await revokePortalKey(deps, sessionOf(caller), keyId)
    return { data: {} }
  },
})

const Count = (description: string) => Type.Integer({ minimum: 0, description })

export const getVerificationsRoute = portalSessionRoute({
  operation: 'portal.getVerifications',
  doc: {
    summary: "The customer's verification counts over a window, by outcome, by the hour (by the day past a week)",
    description: `${COOKIE_ONLY} Needs the scope analytics:read. Every verification that resolved to the customer in the session's apis, deleted keys' included; zero-filled unless perKey. Answers 412 where this control plane serves no analytics.`,
    tag: TAG,
  },
  body: Type.Object(
    {
      startTime: Unix('Start of the window, unix ms (inclusive)'),
      endTime: Unix('End of the window, unix ms (exclusive)'),
      keyId: Type.Optional(KeyIdField('Only this key of the customer')),
      keyIds: Type.Optional(
        Type.Array(KeyIdField(), {
          minItems: 1,
          maxItems: MAX_KEY_IDS,
          description: `Only these keys of the customer (at most ${MAX_KEY_IDS})`,
        }),
      ),
      perKey: Type.Optional(Type.Boolean({ description: 'A row per key and bucket (not zero-filled)' })),
    },
    { additionalProperties: false },
  ),
  data: Type.Array(
    Type.Object({
      time: Unix('Bucket start, unix ms'),
      keyId: Type.Optional(Type.String({ description: 'The key (with perKey)' })),
      total: Count('Verifications in the bucket'),
      valid: Count('VALID'),
      rateLimited: Count('RATE_LIMITED'),
      insufficientPermissions: Count('INSUFFICIENT_PERMISSIONS'),
      forbidden: Count('FORBIDDEN'),
      disabled: Count('DISABLED'),
      expired: Count('EXPIRED'),
      usageExceeded: Count('USAGE_EXCEEDED'),
      spentCredits: Count('Credits spent'),
    }),
  ),
  session: true,
  handle: async (body, caller, deps) => ({
    data: await getPortalVerifications(deps, sessionOf(caller), {
      startTime: body.startTime,
      endTime: body.endTime,
      keyIds: body.keyId === undefined ? body.keyIds : [body.keyId, ...(body.keyIds ?? [])],
      perKey: body.perKey,
    }),
  }),
})

export const getUsageThresholdsRoute = portalSessionRoute({
  operation: 'portal.getUsageThresholds',
  doc: {
    summary: "The customer's usage thresholds, each with its usage in the current UTC day or month",
    description: `Keygate's own. ${COOKIE_ONLY} Needs the scope analytics:read. The thresholds of the session's identity (identities.updateIdentity sets them), counted as usage alerts count them: over every api, billable by each api's billableOutcomes. Answers 412 where this control plane serves no analytics.`,
    tag: TAG,
  },
  body: Empty,
  data: Type.Array(
    Type.Object({
      measure: StringEnum(USAGE_MEASURES, { description: 'billable verifications or credits spent' }),
      period: StringEnum(USAGE_PERIODS, { description: 'the current UTC day or month' }),
      value: Count('The threshold'),
      usage: Count('The usage counted so far in the period'),
      start: Unix("The period's start, unix ms"),
      end: Unix("The period's end, unix ms (exclusive)"),
    }),
  ),
  session: true,
  handle: async (_body, caller, deps) => ({ data: await getPortalUsageThresholds(deps, sessionOf(caller)) }),
})

export const signOutRoute = portalSessionRoute({
  operation: 'portal.signOut',
  doc: { summary: 'End this session and clear its cookie', description: `Keygate's own. ${COOKIE_ONLY}`, tag: TAG },
  body: Empty,
  data: Type.Object({}),
  session: true,
  handle: async (_body, caller, deps) => {
    await signOut(deps, sessionOf(caller))
    return { data: {}, cookie: 'clear' }
  },
})

/** The routes the customer's browser calls: Unkey's portal wire, and Keygate's additions. */
export const PORTAL_SESSION_ROUTES: readonly PortalSessionRoute[] = [
  exchangeCodeRoute,
  getSessionRoute,
  listKeysRoute,
  createKeyRoute,
  rerollKeyRoute,
  revokeKeyRoute,
  getVerificationsRoute,
  getUsageThresholdsRoute,
  signOutRoute,
]
