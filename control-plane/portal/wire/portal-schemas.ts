import { Type, type Static } from 'typebox'
import { PORTAL_SCOPES } from '../../../shared/portal/portal.js'
import type { PortalRecord } from '../portal-record.js'
import { PortalKeyDefaultsBody } from './portal-key-defaults.js'
import { StringEnum } from '../../../shared/http/schema-docs.js'

/** A portal as a request names it: its id (`portal_…`) or its slug. */
export const PortalRef = () =>
  Type.String({
    minLength: 3,
    maxLength: 64,
    description: 'The portal: its id (`portal_…`) or its slug',
    examples: ['acme-keys'],
  })

export const PortalSlug = () =>
  Type.String({
    pattern: '^[a-z0-9][a-z0-9-]{1,62}[a-z0-9]$',
    description: 'Its unique name in URLs and calls: 3–64 lowercase letters, digits and dashes',
    examples: ['acme-keys'],
  })

export const PortalName = () =>
  Type.String({ minLength: 1, maxLength: 100, description: 'Shown as the page title', examples: ['Acme API keys'] })

export const PortalApiIds = () =>
  Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
    minItems: 1,
    maxItems: 20,
    uniqueItems: true,
    description: 'The apis whose keys the portal shows (its sessions reach these, or fewer)',
  })

export const PortalLogoUrl = () =>
  Type.String({
    maxLength: 500,
    pattern: '^https://[^\\s]+$',
    description: 'An https URL of the logo the page shows',
    examples: ['https://acme.example/logo.svg'],
  })

export const PortalAccentColor = () =>
  Type.String({
    pattern: '^#[0-9a-fA-F]{6}$',
    description: "The page's accent colour, `#rrggbb`",
    examples: ['#3355ff'],
  })

export const MaxKeysPerIdentity = () =>
  Type.Integer({
    minimum: 1,
    maximum: 1_000,
    description: 'Keys one customer may hold in each api through the portal (default 20)',
  })

export const PortalScopes = () =>
  Type.Array(StringEnum([...PORTAL_SCOPES]), {
    minItems: 1,
    maxItems: PORTAL_SCOPES.length,
    uniqueItems: true,
    description:
      'What the customer may do: keys:read (list), keys:create, keys:reroll, keys:revoke (Keygate’s), analytics:read',
  })

/** A portal as getPortal, updatePortal and listPortals answer it. */
export const PortalData = Type.Object(
  {
    portalId: Type.String({ description: "The portal's id (`portal_…`)" }),
    slug: Type.String({ description: 'Its unique name' }),
    name: Type.String({ description: 'The page title' }),
    apiIds: Type.Array(Type.String(), { description: 'The apis its sessions reach' }),
    enabled: Type.Boolean({ description: 'false: its sessions are refused' }),
    logoUrl: Type.Optional(Type.String({ description: 'The logo the page shows' })),
    accentColor: Type.Optional(Type.String({ description: "The page's accent colour" })),
    keyDefaults: Type.Optional(PortalKeyDefaultsBody),
    maxKeysPerIdentity: Type.Integer({ description: 'Keys one customer may hold in each api through the portal' }),
    createdAt: Type.Number({ description: 'When it was created, unix ms' }),
    updatedAt: Type.Optional(Type.Number({ description: 'When it last changed, unix ms' })),
  },
  { description: 'A portal' },
)

export function toPortalData(portal: PortalRecord): Static<typeof PortalData> {
  const { id, ...rest } = portal
  return { portalId: id, ...rest }
}
