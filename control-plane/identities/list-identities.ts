import { ApiError } from '../../shared/errors/errors.js'
import type { IdentityRecord } from '../../shared/identity.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { IdentityPage } from './identities.js'
import { IDENTITY_ENVIRONMENT } from './identity-access.js'
import { searchFor, type RecordPage } from '../index-page.js'
import { may, requireAction } from '../root-keys/root-key-auth.js'

/**
 * Which identities a listing shows, and who may list them, as Unkey's two versions rule it.
 * - `{environment}` (v1): those of the environment, to a root key with identity.<environment>.read_identity, checked
 *   before anything is read. Every identity is in IDENTITY_ENVIRONMENT; another has none. The page counts every
 *   identity (`total`) and has a cursor whenever it is full.
 * - `{search}` (v2): those whose id or externalId contains `search` (all when none), to a root key with
 *   identity.*.read_identity or identity.<id>.read_identity for every identity on the page, checked on the page.
 *   The page has a cursor only when another identity follows.
 */
export type IdentityListing = { environment: string } | { search?: string }

export interface ListIdentitiesInput<Listing extends IdentityListing> {
  listing: Listing
  /** The `cursor` of the page before; none for the first page. */
  cursor?: string
  limit: number
}

/** A page of identities in id order (oldest first), after `cursor`, as `listing` has it. */
export async function listIdentities(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: ListIdentitiesInput<{ environment: string }>,
): Promise<IdentityPage>
export async function listIdentities(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: ListIdentitiesInput<{ search?: string }>,
): Promise<RecordPage<IdentityRecord>>
export async function listIdentities(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: ListIdentitiesInput<IdentityListing>,
): Promise<IdentityPage | RecordPage<IdentityRecord>> {
  const { principal } = caller
  const { listing, cursor, limit } = input
  if ('environment' in listing) {
    requireAction(principal, 'identity', listing.environment, 'read_identity')
    if (listing.environment !== IDENTITY_ENVIRONMENT) return { identities: [], total: 0 }
    return deps.identities.list({ cursor, limit })
  }
  const matches = searchFor(listing.search)
  const page = await deps.identities.page({ cursor, limit }, (identity) => matches([identity.id, identity.externalId]))
  // One refusal whatever the page holds: it names no identity, and does not tell whether the search found any.
  const readable =
    may(principal, 'identity', '*', 'read_identity') ||
    (page.records.length > 0 &&
      page.records.every((identity) => may(principal, 'identity', identity.id, 'read_identity')))
  if (!readable)
    throw new ApiError(
      'INSUFFICIENT_PERMISSIONS',
      'the root key needs identity.*.read_identity, or identity.<id>.read_identity for every identity listed',
    )
  return page
}
