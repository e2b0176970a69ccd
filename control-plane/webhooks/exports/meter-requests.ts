/**
 * A period's usage as each billing provider's usage API takes it: the request a meter export sends for one usage event
 * (usage-events.ts), and what the provider's answer means. Pure: the delivery worker sends what this builds, with the
 * export's credential opened for the one request, and retries or stops as the answer's meaning says.
 *
 * Every request is idempotent on its delivery's id — the event's, derived from its subject, period and apis, and the
 * export's: the same period sent twice to one export carries the same identifier, and each provider drops the second
 * within its window (METER_WINDOWS_MS); two exports of the same apis to one provider account carry their own.
 */

import type { MeterProvider } from '../../../shared/meter-export.js'

/**
 * How long after a request a provider still recognises its identifier as sent, at most as far as it documents: a
 * retry or a replay later than this could count the period twice, so it waits for an operator instead. Stripe
 * guarantees its meter events' identifiers unique over at least 24 hours (their Idempotency-Key too); OpenMeter's
 * deduplication defaults to 24 hours where it is on; Lago keeps a transaction_id unique per subscription for good
 * (its Postgres store) or replaces an event sent again with the same timestamp (its ClickHouse store). Each is cut
 * short by an hour's margin for clocks and queues.
 */
export const METER_WINDOWS_MS: Record<MeterProvider, number> = {
  stripe: 23 * 3_600_000,
  lago: Number.POSITIVE_INFINITY,
  openmeter: 23 * 3_600_000,
}

/**
 * How far back a provider takes usage: Stripe refuses meter events over 35 days old (with an hour's margin here).
 * Lago and OpenMeter take any time, though an invoice already finalised no longer counts it.
 */
export const METER_OLDEST_MS: Record<MeterProvider, number> = {
  stripe: 35 * 86_400_000 - 3_600_000,
  lago: Number.POSITIVE_INFINITY,
  openmeter: Number.POSITIVE_INFINITY,
}

/** What one usage event is sent as: who, how much, over which period, under which identifier. */
export interface MeterReading {
  /** The delivery's id (`msg_….whep_…`: the event's and the export's): the provider's idempotency identifier. */
  id: string
  /** The provider's customer: a Stripe customer id, a Lago subscription's external id, an OpenMeter subject. */
  customer: string
  /** The amount, a whole number: billable verifications or credits spent. */
  value: number
  /** The period's start, Unix ms: the usage's time at the provider. */
  periodStart: number
  /** The apis summed over (the export's). */
  apiIds: readonly string[] | '*'
}

export interface MeterTarget {
  provider: MeterProvider
  /** Where the provider's API is: Stripe's `https://api.stripe.com`, a Lago or OpenMeter server's base URL. */
  baseUrl: string
  /** Stripe's meter event name, Lago's billable metric code, OpenMeter's event type. */
  meter: string
  /** The credential, opened for this request only: Stripe's secret key, Lago's API key, OpenMeter's token. */
  credential: string
}

export interface MeterRequest {
  url: string
  headers: Record<string, string>
  body: string
  /** The credential its headers carry: kept out of what is recorded of the answer (answerWithout). */
  credential: string
}

/** The request that sends `reading` to `target`. */
export function meterRequest(target: MeterTarget, reading: MeterReading): MeterRequest {
  const base = target.baseUrl.replace(/\/+$/, '')
  const authorization = `Bearer ${target.credential}`
  const seconds = Math.floor(reading.periodStart / 1000)
  switch (target.provider) {
    case 'stripe':
      // v1's form encoding; the identifier is Stripe's business-level dedup, the Idempotency-Key its transport's.
      return {
        url: `${base}/v1/billing/meter_events`,
        headers: {
          authorization,
          'content-type': 'application/x-www-form-urlencoded',
          'idempotency-key': reading.id,
        },
        credential: target.credential,
        body: new URLSearchParams({
          event_name: target.meter,
          'payload[stripe_customer_id]': reading.customer,
          'payload[value]': String(reading.value),
          identifier: reading.id,
          timestamp: String(seconds),
        }).toString(),
      }
    case 'lago':
      // The timestamp is the same on every send: Lago's ClickHouse store replaces an event only at the same one.
      return {
        url: `${base}/api/v1/events`,
        headers: { authorization, 'content-type': 'application/json' },
        credential: target.credential,
        body: JSON.stringify({
          event: {
            transaction_id: reading.id,
            external_subscription_id: reading.customer,
            code: target.meter,
            timestamp: seconds,
            properties: { value: reading.value },
          },
        }),
      }
    case 'openmeter':
      return {
        url: `${base}/api/v1/events`,
        headers: { authorization, 'content-type': 'application/cloudevents+json' },
        credential: target.credential,
        body: JSON.stringify({
          specversion: '1.0',
          id: reading.id,
          source: `keygate/${reading.apiIds === '*' ? '*' : reading.apiIds.join(',')}`,
          type: target.meter,
          subject: reading.customer,
          time: new Date(reading.periodStart).toISOString(),
          datacontenttype: 'application/json',
          data: { value: reading.value },
        }),
      }
  }
}

/**
 * What a provider's answer means: `delivered` (taken, or a duplicate of what it took: the period is at the provider
 * once), `retry` (it may take it later: 429, 5xx, no answer), `refused` (it never will as sent: a wrong credential,
 * an unknown meter; retrying sends nothing new — the delivery is dead-lettered for an operator).
 */
export function meterAnswer(
  provider: MeterProvider,
  answer: { status?: number; snippet?: string },
): 'delivered' | 'retry' | 'refused' {
  const { status, snippet = '' } = answer
  if (status === undefined || status === 408 || status === 409 || status === 429 || status >= 500) return 'retry'
  if (status >= 200 && status < 300) return 'delivered'
  // Stripe answers an identifier it has seen with a 400 (its docs say nothing of it: the message is what tells it).
  if (provider === 'stripe' && status === 400 && snippet.includes('An event already exists with identifier'))
    return 'delivered'
  // Lago's Postgres store answers a transaction_id it has with a 422.
  if (provider === 'lago' && status === 422 && /"transaction_id"\s*:\s*\[\s*"value_already_exist"/.test(snippet))
    return 'delivered'
  return 'refused'
}

/** Credential characters at the end of a cut-off answer taken for the start of the credential: fewer are kept. */
const CUT_CREDENTIAL_CHARS = 4

/**
 * `answer` as the delivery log may keep it: a provider, or a proxy in front of it, may say the request's Authorization
 * header back in its body (an "invalid key" message), and the log is shown to whoever reads the endpoint. Each
 * occurrence of the credential is replaced, and so is a start of it where the snippet was cut off.
 */
export function answerWithout<T extends { snippet?: string }>(answer: T, credential: string): T {
  if (answer.snippet === undefined || credential === '') return answer
  let snippet = answer.snippet.replaceAll(credential, '[credential]')
  for (let length = credential.length - 1; length >= CUT_CREDENTIAL_CHARS; length--)
    if (snippet.endsWith(credential.slice(0, length))) {
      snippet = `${snippet.slice(0, -length)}[credential]`
      break
    }
  return { ...answer, snippet }
}
