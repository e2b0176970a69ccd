import { MAX_WEBHOOK_ENDPOINTS, type ClaimLanes, type EndpointRoom } from '../../shared/webhook.js'

/**
 * Where a worker sends an endpoint's deliveries, by what its last attempt from this worker came to: `healthy`
 * (delivered), `failing` (a timeout, a refused or reset connection, a status other than 2xx) or `new` (none yet).
 */
export type SendLane = 'healthy' | 'failing' | 'new'
export const SEND_LANES: readonly SendLane[] = ['healthy', 'failing', 'new']

/**
 * Requests at once in each lane, and to one endpoint in it. Endpoints that answer have 16 slots of their own, 4 each;
 * those that fail share 4 more, one each, so that however many never answer they hold 4 requests for a timeout, never
 * the slots of those that do; a new endpoint gets one request of its own, beside the others, which tells which lane it
 * belongs in: after one timeout at most, or at its first answer.
 */
const SLOTS: Record<SendLane, number> = { healthy: 16, failing: 4, new: MAX_WEBHOOK_ENDPOINTS }
const PER_ENDPOINT: Record<SendLane, number> = { healthy: 4, failing: 1, new: 1 }
/**
 * How long a claim passes over the deliveries of an endpoint with no slot free, ms: those of a healthy or a new one are
 * looked at again by the next claim (its slot is free as soon as an answer comes), a failing one's a second later.
 */
const PASSED_OVER_MS: Record<SendLane, number> = { healthy: 200, failing: 1_000, new: 200 }
/** Outcomes kept: every endpoint's, and as many of endpoints deleted since (the oldest set forgotten first). */
const OUTCOMES_KEPT = 2 * MAX_WEBHOOK_ENDPOINTS

/** One worker's slots: which endpoint goes in which lane, and how many requests each lane and endpoint has out. */
export class SendLanes {
  /** Each endpoint's last outcome: true if delivered. In the order last set (the oldest first). */
  private readonly outcomes = new Map<string, boolean>()
  /** Requests out per endpoint (in whichever lane each was taken). */
  private readonly sending = new Map<string, number>()
  private readonly inLane: Record<SendLane, number> = { healthy: 0, failing: 0, new: 0 }

  laneOf(endpointId: string): SendLane {
    const delivered = this.outcomes.get(endpointId)
    return delivered === undefined ? 'new' : delivered ? 'healthy' : 'failing'
  }

  /** Requests out in the lane. */
  inFlight(lane: SendLane): number {
    return this.inLane[lane]
  }

  /** What a claim at `nowMs` may take: each lane's free slots, each endpoint's, and how many in all. */
  claimLanes(nowMs: number): { lanes: ClaimLanes; limit: number } {
    const lanes = SEND_LANES.map((lane) => ({
      room: SLOTS[lane] - this.inLane[lane],
      untilMs: nowMs + PASSED_OVER_MS[lane],
    }))
    const endpoints = new Map<string, EndpointRoom>()
    for (const id of new Set([...this.outcomes.keys(), ...this.sending.keys()])) {
      const lane = this.laneOf(id)
      endpoints.set(id, { lane: SEND_LANES.indexOf(lane), room: Math.max(0, this.roomOf(id, lane)) })
    }
    const others = { lane: SEND_LANES.indexOf('new'), room: PER_ENDPOINT.new }
    return { lanes: { lanes, endpoints, others }, limit: lanes.reduce((sum, lane) => sum + Math.max(0, lane.room), 0) }
  }

  /** A slot for a request to the endpoint, in its lane now: that lane, or undefined if it has none free. */
  take(endpointId: string): SendLane | undefined {
    const lane = this.laneOf(endpointId)
    if (this.roomOf(endpointId, lane) <= 0 || this.inLane[lane] >= SLOTS[lane]) return undefined
    this.sending.set(endpointId, (this.sending.get(endpointId) ?? 0) + 1)
    this.inLane[lane]++
    return lane
  }

  /** The request's slot is free again. */
  release(endpointId: string, lane: SendLane): void {
    this.inLane[lane]--
    const left = (this.sending.get(endpointId) ?? 1) - 1
    if (left > 0) this.sending.set(endpointId, left)
    else this.sending.delete(endpointId)
  }

  /** What an attempt came to: the endpoint's lane from now on. */
  record(endpointId: string, delivered: boolean): void {
    this.outcomes.delete(endpointId)
    this.outcomes.set(endpointId, delivered)
    if (this.outcomes.size > OUTCOMES_KEPT) this.outcomes.delete(this.outcomes.keys().next().value!)
  }

  private roomOf(endpointId: string, lane: SendLane): number {
    return PER_ENDPOINT[lane] - (this.sending.get(endpointId) ?? 0)
  }
}
