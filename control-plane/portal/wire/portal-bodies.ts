import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'
import { PortalKeyDefaultsBody } from './portal-key-defaults.js'
import {
  MaxKeysPerIdentity,
  PortalAccentColor,
  PortalApiIds,
  PortalLogoUrl,
  PortalName,
  PortalRef,
  PortalSlug,
} from './portal-schemas.js'
import { Nullable } from '../../keys/wire/key-bodies.v2.js'

export const CreatePortalBody = Type.Object(
  {
    slug: PortalSlug(),
    name: PortalName(),
    apiIds: PortalApiIds(),
    enabled: Type.Optional(Type.Boolean({ description: 'false: its sessions are refused (default true)' })),
    logoUrl: Type.Optional(PortalLogoUrl()),
    accentColor: Type.Optional(PortalAccentColor()),
    keyDefaults: Type.Optional(PortalKeyDefaultsBody),
    maxKeysPerIdentity: Type.Optional(MaxKeysPerIdentity()),
  },
  {
    additionalProperties: false,
    examples: [
      { slug: 'acme-api-keys', name: 'Acme API keys', apiIds: [WIRE_EXAMPLES.apiId], keyDefaults: { prefix: 'acme' } },
    ],
  },
)

export const UpdatePortalBody = Type.Object(
  {
    portal: PortalRef(),
    name: Type.Optional(PortalName()),
    apiIds: Type.Optional(PortalApiIds()),
    enabled: Type.Optional(Type.Boolean({ description: 'false: its sessions are refused at once' })),
    logoUrl: Type.Optional(Nullable(PortalLogoUrl(), 'Replaces the logo (null removes it)')),
    accentColor: Type.Optional(Nullable(PortalAccentColor(), 'Replaces the colour (null: the default)')),
    keyDefaults: Type.Optional(Nullable(PortalKeyDefaultsBody, 'Replaces the defaults (null removes them)')),
    maxKeysPerIdentity: Type.Optional(MaxKeysPerIdentity()),
  },
  {
    additionalProperties: false,
    description: 'Fields left out are unchanged; null clears one',
    examples: [{ portal: WIRE_EXAMPLES.portalSlug, name: 'Acme keys', accentColor: '#3355ff' }],
  },
)

export const PortalNamedBody = Type.Object(
  { portal: PortalRef() },
  { additionalProperties: false, examples: [{ portal: WIRE_EXAMPLES.portalSlug }] },
)
