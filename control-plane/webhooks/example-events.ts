import { randomBytes } from 'node:crypto'
import type { IdentityRecord } from '../../shared/identity.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import type { WebhookEvent, WebhookEventType } from '../../shared/webhook.js'
import { identityData, keyData } from './events/event-payloads.js'
import type { UsageEventData } from './usage/usage-events.js'
import type { UsageThresholdEventData } from './usage/usage-alerts.js'
import { usagePeriodAt } from '../../shared/usage-threshold.js'

/** The prefix of a test event's id (`webhook-id`): a receiver tells a test from a real event by it. */
export const TEST_EVENT_PREFIX = 'msg_test_'

/** Ids that name nothing: an example is never real data, and says so in every id it carries. */
const EXAMPLE = {
  apiId: 'api_example',
  keyId: 'key_example',
  newKeyId: 'key_example_new',
  identityId: 'id_example',
  externalId: 'example-customer',
  rootKeyId: 'root_example',
  newRootKeyId: 'root_example_new',
} as const

const HOUR = 3_600_000
const DAY = 86_400_000

/** An example key as the store would hold it, made `at`: its events' data come from the real payload (keyData). */
function exampleKey(at: number, extra: Partial<KeyRecord> = {}): KeyRecord {
  return {
    id: EXAMPLE.keyId,
    // keyData never reads it: no event carries a hash.
    hash: '',
    apiId: EXAMPLE.apiId,
    start: 'sk_example',
    name: 'example key',
    ownerId: EXAMPLE.externalId,
    meta: { plan: 'example' },
    enabled: true,
    expires: at + 30 * DAY,
    remaining: 100,
    createdAt: at - DAY,
    rev: 1,
    ...extra,
  }
}

const exampleIdentity = (at: number): IdentityRecord => ({
  id: EXAMPLE.identityId,
  externalId: EXAMPLE.externalId,
  meta: { plan: 'example' },
  createdAt: at,
})

/**
 * Each type's example data, shaped as the deriver makes that type's (event-deriver.ts): the key and identity events
 * from the same payload functions, the others field for field. A new type is a type error here until it has one.
 */
const EXAMPLES: Record<WebhookEventType, (at: number) => Record<string, unknown>> = {
  'key.created': (at) => keyData(exampleKey(at, { createdAt: at }), EXAMPLE.identityId),
  'key.updated': (at) => ({
    ...keyData(exampleKey(at, { enabled: false, updatedAt: at }), EXAMPLE.identityId),
    changed: ['enabled'],
  }),
  'key.deleted': (at) => keyData(exampleKey(at, { updatedAt: at - 60_000 }), EXAMPLE.identityId),
  'key.rerolled': () => ({ keyId: EXAMPLE.keyId, apiId: EXAMPLE.apiId, newKeyId: EXAMPLE.newKeyId }),
  'key.expiring': (at) => keyData(exampleKey(at, { expires: at + 7 * DAY }), EXAMPLE.identityId),
  'key.expired': (at) => keyData(exampleKey(at, { expires: at }), EXAMPLE.identityId),
  'key.credits.low': () => ({ keyId: EXAMPLE.keyId, apiId: EXAMPLE.apiId, remaining: 10, threshold: 10 }),
  'key.credits.exhausted': () => ({ keyId: EXAMPLE.keyId, apiId: EXAMPLE.apiId, remaining: 0 }),
  'key.leaked': (at) => {
    const leaked = {
      at,
      url: 'https://github.com/example/example/blob/main/config.js',
      source: 'content',
      reporter: 'github',
      action: 'notify' as const,
    }
    return { ...keyData(exampleKey(at, { leaked }), EXAMPLE.identityId), leaked }
  },
  'identity.created': (at) => identityData(exampleIdentity(at)),
  'identity.updated': (at) => identityData({ ...exampleIdentity(at), updatedAt: at }),
  'identity.deleted': (at) => identityData(exampleIdentity(at)),
  'rootKey.created': () => ({ rootKeyId: EXAMPLE.rootKeyId, permissions: [`api.${EXAMPLE.apiId}.read_key`] }),
  'rootKey.revoked': () => ({ rootKeyId: EXAMPLE.rootKeyId }),
  'rootKey.rolled': () => ({ rootKeyId: EXAMPLE.rootKeyId, newRootKeyId: EXAMPLE.newRootKeyId }),
  'usage.hourly': (at) => exampleUsage(at, HOUR),
  'usage.daily': (at) => exampleUsage(at, DAY),
  'usage.threshold': (at) => {
    const data: UsageThresholdEventData = {
      externalId: EXAMPLE.externalId,
      threshold: { measure: 'billable', period: 'month', value: 100_000 },
      usage: 100_003,
      period: usagePeriodAt('month', at),
    }
    return { ...data }
  },
}

/** A usage event's data for the period of `ms` before the one holding `at`, as usage-events.ts makes it. */
function exampleUsage(at: number, ms: number): Record<string, unknown> {
  const start = Math.floor(at / ms) * ms - ms
  const data: UsageEventData = {
    externalId: EXAMPLE.externalId,
    period: { start, end: start + ms },
    apiIds: '*',
    verifications: {
      valid: 120,
      rateLimited: 4,
      usageExceeded: 1,
      disabled: 0,
      expired: 0,
      forbidden: 0,
      insufficientPermissions: 0,
      notFound: 0,
      total: 125,
    },
    billable: 120,
    spentCredits: 130,
  }
  return { ...data }
}

/**
 * An example event of `type` at `at`, as webhooks.sendTest sends it: data shaped like the real events of the type,
 * every id an example one, and an id of its own (TEST_EVENT_PREFIX and random characters), so that a receiver that
 * drops repeated ids takes each test.
 */
export function exampleEvent(type: WebhookEventType, at: number): WebhookEvent {
  return { id: `${TEST_EVENT_PREFIX}${randomBytes(12).toString('base64url')}`, type, at, data: EXAMPLES[type](at) }
}
