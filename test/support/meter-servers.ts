import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * Local stand-ins for the three billing providers' usage APIs, each checking a request as its provider documents it
 * and deduplicating as it does — so that a meter export is tested against the shape and idempotency it will meet, with
 * no network beyond this machine. Each keeps the usage it took (`accepted`, once per identifier) and every request it
 * answered (`answered`), and can be told to fail (`failing`: a 503 until turned off).
 *
 * Stripe (POST /v1/billing/meter_events): form-encoded, `Authorization: Bearer <secret key>`; event_name a meter it
 * has, payload[stripe_customer_id], payload[value] a whole number as text, identifier ≤ 100 characters, timestamp in
 * Unix seconds within 35 days back and 5 minutes ahead. An Idempotency-Key seen before replays its first answer (the
 * same key with other parameters: 400 idempotency_error); an identifier seen before under another key: 400
 * invalid_request_error "An event already exists with identifier …". 200 with the meter event.
 *
 * Lago (POST /api/v1/events): JSON `{event: {transaction_id, external_subscription_id, code, timestamp, properties}}`,
 * Bearer API key; timestamp Unix seconds (a number or numeric text); a transaction_id seen for the subscription: 422
 * `error_details: {transaction_id: ["value_already_exist"]}` (its Postgres store). 200 with the event.
 *
 * OpenMeter (POST /api/v1/events): a CloudEvent, `application/cloudevents+json`, Bearer token; specversion 1.0, id,
 * source, type and subject required, time RFC 3339, data an object; an (id, source) seen: taken silently. 204.
 */
export interface MeterServer {
  url: string
  /** Usage taken, once per identifier: the customer, the meter, the value, the time (Unix seconds). */
  accepted: { id: string; customer: string; meter: string; value: number; time: number }[]
  /** Every answer given: its status and the body. */
  answered: { status: number; body: string }[]
  /** While true, every request is answered 503 (and nothing is taken). */
  failing: boolean
  stop(): Promise<void>
}

interface Answer {
  status: number
  body: string
  type?: string
}

type Handle = (request: IncomingMessage, body: string, taken: MeterServer['accepted']) => Answer

const DAY_S = 86_400

async function serve(handle: Handle): Promise<MeterServer> {
  const state: MeterServer = {
    url: '',
    accepted: [],
    answered: [],
    failing: false,
    stop: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const answer: Answer = state.failing
        ? { status: 503, body: 'unavailable' }
        : request.method !== 'POST'
          ? { status: 405, body: 'POST only' }
          : handle(request, body, state.accepted)
      state.answered.push({ status: answer.status, body: answer.body })
      response.writeHead(answer.status, answer.type ? { 'content-type': answer.type } : {}).end(answer.body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return state
}

const json = (status: number, value: unknown, type = 'application/json'): Answer => ({
  status,
  body: JSON.stringify(value),
  type,
})
const bearer = (request: IncomingMessage) => /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1]
const whole = (text: unknown) => typeof text === 'string' && /^-?\d+$/.test(text)

/** Stripe's meter events, v1. `meters` are the event names it has; `secretKey` the key it takes. */
export function startStripeServer(options: { secretKey: string; meters: string[]; now?: () => number }) {
  const now = options.now ?? Date.now
  const byIdempotencyKey = new Map<string, { params: string; answer: Answer }>()
  const identifiers = new Set<string>()
  const error = (status: number, type: string, message: string, param?: string) =>
    json(status, { error: { type, message, ...(param ? { param } : {}) } })
  const handle: Handle = (request, body, taken) => {
    if (request.url !== '/v1/billing/meter_events')
      return error(404, 'invalid_request_error', 'Unrecognized request URL')
    if (bearer(request) !== options.secretKey) return error(401, 'invalid_request_error', 'Invalid API Key provided')
    if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded'))
      return error(400, 'invalid_request_error', 'Invalid request: a form-encoded body is expected')
    const form = new URLSearchParams(body)
    const idempotencyKey = request.headers['idempotency-key']
    if (typeof idempotencyKey === 'string') {
      const seen = byIdempotencyKey.get(idempotencyKey)
      if (seen !== undefined)
        return seen.params === body
          ? seen.answer
          : error(400, 'idempotency_error', 'Keys for idempotent requests can only be used with the same parameters')
    }
    const answer = checkStripe(form, now(), options.meters, identifiers, error)
    if (answer.status === 200) {
      identifiers.add(form.get('identifier')!)
      taken.push({
        id: form.get('identifier')!,
        customer: form.get('payload[stripe_customer_id]')!,
        meter: form.get('event_name')!,
        value: Number(form.get('payload[value]')),
        time: Number(form.get('timestamp')),
      })
    }
    // Stripe keeps the answer of a request that ran (not of one refused before it did: a bad key, a bad form).
    if (typeof idempotencyKey === 'string' && answer.status !== 401)
      byIdempotencyKey.set(idempotencyKey, { params: body, answer })
    return answer
  }
  return serve(handle)
}

function checkStripe(
  form: URLSearchParams,
  nowMs: number,
  meters: string[],
  identifiers: Set<string>,
  error: (status: number, type: string, message: string, param?: string) => Answer,
): Answer {
  const allowed = new Set(['event_name', 'payload[stripe_customer_id]', 'payload[value]', 'identifier', 'timestamp'])
  for (const name of form.keys())
    if (!allowed.has(name)) return error(400, 'invalid_request_error', `Received unknown parameter: ${name}`, name)
  const eventName = form.get('event_name')
  if (!eventName || eventName.length > 100)
    return error(400, 'invalid_request_error', 'Missing event_name', 'event_name')
  if (!meters.includes(eventName)) return error(400, 'invalid_request_error', `No active meter found for ${eventName}`)
  if (!form.get('payload[stripe_customer_id]')?.startsWith('cus_'))
    return error(400, 'invalid_request_error', 'Missing stripe_customer_id', 'payload[stripe_customer_id]')
  if (!whole(form.get('payload[value]')))
    return error(400, 'invalid_request_error', 'value must be a whole number', 'payload[value]')
  const identifier = form.get('identifier')
  if (!identifier || identifier.length > 100)
    return error(400, 'invalid_request_error', 'identifier: at most 100 characters', 'identifier')
  const timestamp = form.get('timestamp')
  const seconds = Number(timestamp)
  const now = Math.floor(nowMs / 1000)
  if (!whole(timestamp) || seconds < now - 35 * DAY_S || seconds > now + 300)
    return error(400, 'invalid_request_error', 'timestamp_too_far_in_past or in the future', 'timestamp')
  if (identifiers.has(identifier))
    return error(400, 'invalid_request_error', `An event already exists with identifier ${identifier}.`)
  return json(200, {
    object: 'billing.meter_event',
    created: now,
    event_name: eventName,
    identifier,
    livemode: false,
    payload: { stripe_customer_id: form.get('payload[stripe_customer_id]'), value: form.get('payload[value]') },
    timestamp: seconds,
  })
}

/** Lago's events API. `apiKey` the key it takes; `codes` its billable metrics. */
export function startLagoServer(options: { apiKey: string; codes: string[] }) {
  const transactions = new Set<string>()
  const invalid = (details: Record<string, string[]>) =>
    json(422, { status: 422, error: 'Unprocessable Entity', code: 'validation_errors', error_details: details })
  const handle: Handle = (request, body, taken) => {
    if (request.url !== '/api/v1/events') return json(404, { status: 404, error: 'Not Found' })
    if (bearer(request) !== options.apiKey) return json(401, { status: 401, error: 'Unauthorized' })
    let event: Record<string, unknown> | undefined
    try {
      event = (JSON.parse(body) as { event?: Record<string, unknown> }).event
    } catch {
      return json(400, { status: 400, error: 'BadRequest: the body is not JSON' })
    }
    if (typeof event !== 'object' || event === null)
      return json(400, { status: 400, error: 'BadRequest: param is missing or the value is empty: event' })
    const { transaction_id, external_subscription_id, code, timestamp, properties } = event
    if (typeof transaction_id !== 'string' || transaction_id === '')
      return invalid({ transaction_id: ['value_is_mandatory'] })
    if (typeof code !== 'string' || code === '') return invalid({ code: ['value_is_mandatory'] })
    if (typeof external_subscription_id !== 'string' || external_subscription_id === '')
      return invalid({ external_subscription_id: ['value_is_mandatory'] })
    if (!(typeof timestamp === 'number' || (typeof timestamp === 'string' && /^\d+(\.\d+)?$/.test(timestamp))))
      return invalid({ timestamp: ['invalid_format'] })
    const key = `${external_subscription_id}\u0000${transaction_id}`
    if (transactions.has(key)) return invalid({ transaction_id: ['value_already_exist'] })
    const value = (properties as { value?: unknown } | undefined)?.value
    transactions.add(key)
    // An unknown code is taken here and reported later by Lago (its events.errors webhook): counted as nothing.
    if (options.codes.includes(code))
      taken.push({
        id: transaction_id,
        customer: external_subscription_id,
        meter: code,
        value: Number(value),
        time: Number(timestamp),
      })
    return json(200, { event: { lago_id: `lago_${transactions.size}`, transaction_id, code, timestamp, properties } })
  }
  return serve(handle)
}

/** OpenMeter's ingest of CloudEvents. `token` the bearer token it takes; `types` the event types its meters read. */
export function startOpenMeterServer(options: { token: string; types: string[] }) {
  const seen = new Set<string>()
  const problem = (status: number, detail: string) =>
    json(status, { type: 'about:blank', title: 'Bad Request', status, detail }, 'application/problem+json')
  const handle: Handle = (request, body, taken) => {
    if (request.url !== '/api/v1/events') return problem(404, 'not found')
    if (bearer(request) !== options.token) return problem(401, 'unauthorized')
    const type = request.headers['content-type'] ?? ''
    if (!type.startsWith('application/cloudevents+json')) return problem(400, `invalid content type: ${type}`)
    let event: Record<string, unknown>
    try {
      event = JSON.parse(body) as Record<string, unknown>
    } catch {
      return problem(400, 'invalid event: not JSON')
    }
    for (const field of ['id', 'source', 'type', 'subject'])
      if (typeof event[field] !== 'string' || event[field] === '')
        return problem(400, `invalid event: ${field} is required`)
    if (event.specversion !== '1.0') return problem(400, 'invalid event: specversion must be 1.0')
    const time = event.time
    if (time !== undefined && (typeof time !== 'string' || Number.isNaN(Date.parse(time)) || !time.includes('T')))
      return problem(400, 'invalid event: time is not RFC 3339')
    if (
      event.data !== undefined &&
      (typeof event.data !== 'object' || event.data === null || Array.isArray(event.data))
    )
      return problem(400, 'invalid event: data must be an object')
    const key = `${String(event.source)}\u0000${String(event.id)}`
    if (!seen.has(key)) {
      seen.add(key)
      if (options.types.includes(String(event.type)))
        taken.push({
          id: String(event.id),
          customer: String(event.subject),
          meter: String(event.type),
          value: Number((event.data as { value?: unknown } | undefined)?.value),
          time: Math.floor(Date.parse(String(time)) / 1000),
        })
    }
    return { status: 204, body: '' }
  }
  return serve(handle)
}
