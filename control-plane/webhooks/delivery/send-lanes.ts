import { MAX_WEBHOOK_ENDPOINTS, type ClaimLanes, type EndpointRoom } from '../../../shared/webhook.js'

/**
 * Where a worker sends an endpoint's deliveries, by how long its requests from this worker hold a slot: `fast` (they
 * end quickly, whatever the status, QUICK_RUN times in a row or more), `slow` (one timed out, hung or took a sizeable
 * share of the timeout, and it has not answered quickly QUICK_RUN times in a row since) or `new` (never slow, and not
 * yet quick QUICK_RUN times).
 */
export type SendLane = 'fast' | 'slow' | 'new'
export const SEND_LANES: readonly SendLane[] = ['fast', 'slow', 'new']

/**
 * Requests at once in each lane, and to one endpoint in it. Quick endpoints have 16 slots of their own, 4 each; slow
 * ones share 4 more, one each, so that however many never answer they hold 4 requests for a timeout, never the slots
 * of those that answer quickly; a new endpoint gets one request of its own, beside the others, until its answers tell
 * which lane it belongs in.
 */
const SLOTS: Record<SendLane, number> = { fast: 16, slow: 4, new: MAX_WEBHOOK_ENDPOINTS }
const PER_ENDPOINT: Record<SendLane, number> = { fast: 4, slow: 1, new: 1 }
/**
 * How long a claim passes over the deliveries of an endpoint with no slot free, ms: those of a fast or a new one are
 * looked at again by the next claim (its slot is free as soon as an answer comes), a slow one's a second later.
 */
const PASSED_OVER_MS: Record<SendLane, number> = { fast: 200, slow: 1_000, new: 200 }
/** A request that holds its slot this share of the webhook timeout or longer (or is still out after it) is slow. */
const SLOW_SHARE = 1 / 4
/**
 * Quick answers in a row that earn an endpoint the fast lane: a new one's first, and a slow one's since it was last
 * slow. One slow request sends an endpoint to the slow lane at once; getting out takes a run of quick ones, so that an
 * endpoint that is quick and slow by turns stays where it holds one slot, never four of the fast lane's for a timeout
 * after each quick answer (nor does a new one that flaps from the start). The price is small: an endpoint that has
 * truly recovered, or a new one, answers its run one request at a time, in a second or a few.
 */
const QUICK_RUN = 5
/** Paces kept: every endpoint's, and as many of endpoints deleted since (the oldest set forgotten first). */
const PACES_KEPT = 2 * MAX_WEBHOOK_ENDPOINTS

/** How an endpoint's requests have gone: its lane, and how many quick answers it has given in a row. */
interface Pace {
  lane: SendLane
  quickRun: number
}

/** A request's slot: whose it is, in which lane it was taken, and when (the worker's clock, unix ms). */
export interface SendSlot {
  endpointId: string
  lane: SendLane
  takenAt: number
}

/** One worker's slots: which endpoint goes in which lane, and how many requests each lane and endpoint has out. */
export class SendLanes {
  private readonly paces = new Map<string, Pace>()
  /** When each request out was sent, per endpoint (in whichever lane each was taken). */
  private readonly out = new Map<string, number[]>()
  private readonly inLane: Record<SendLane, number> = { fast: 0, slow: 0, new: 0 }
  /** Slot time from which a request is slow, ms. */
  private readonly slowMs: number

  constructor(timeoutMs: number) {
    this.slowMs = timeoutMs * SLOW_SHARE
  }

  laneOf(endpointId: string): SendLane {
    return this.paces.get(endpointId)?.lane ?? 'new'
  }

  /** Requests out in the lane. */
  inFlight(lane: SendLane): number {
    return this.inLane[lane]
  }

  /**
   * What a claim at `nowMs` may take: each lane's free slots, each endpoint's, and how many in all. An endpoint with a
   * request out for as long as makes it slow is slow from now: its other slots are not refilled while that one hangs.
   */
  claimLanes(nowMs: number): { lanes: ClaimLanes; limit: number } {
    for (const [id, sentAt] of this.out) if (nowMs - Math.min(...sentAt) >= this.slowMs) this.note(id, true)
    const lanes = SEND_LANES.map((lane) => ({
      room: SLOTS[lane] - this.inLane[lane],
      untilMs: nowMs + PASSED_OVER_MS[lane],
    }))
    const endpoints = new Map<string, EndpointRoom>()
    for (const id of new Set([...this.paces.keys(), ...this.out.keys()])) {
      const lane = this.laneOf(id)
      endpoints.set(id, { lane: SEND_LANES.indexOf(lane), room: Math.max(0, this.roomOf(id, lane)) })
    }
    const others = { lane: SEND_LANES.indexOf('new'), room: PER_ENDPOINT.new }
    return { lanes: { lanes, endpoints, others }, limit: lanes.reduce((sum, lane) => sum + Math.max(0, lane.room), 0) }
  }

  /** A slot for a request to the endpoint at `nowMs`, in its lane now; undefined if that lane has none free for it. */
  take(endpointId: string, nowMs: number): SendSlot | undefined {
    const lane = this.laneOf(endpointId)
    if (this.roomOf(endpointId, lane) <= 0 || this.inLane[lane] >= SLOTS[lane]) return undefined
    this.out.set(endpointId, [...(this.out.get(endpointId) ?? []), nowMs])
    this.inLane[lane]++
    return { endpointId, lane, takenAt: nowMs }
  }

  /** The request's slot is free again. */
  release({ endpointId, lane, takenAt }: SendSlot): void {
    this.inLane[lane]--
    const sentAt = this.out.get(endpointId) ?? []
    sentAt.splice(sentAt.indexOf(takenAt), 1)
    if (sentAt.length === 0) this.out.delete(endpointId)
  }

  /** How long a request to the endpoint held its slot, ms (a timeout: the timeout): its lane from now on. */
  record(endpointId: string, slotMs: number): void {
    this.note(endpointId, slotMs >= this.slowMs)
  }

  private note(endpointId: string, slow: boolean): void {
    const pace = this.paces.get(endpointId)
    const quickRun = slow ? 0 : (pace?.quickRun ?? 0) + 1
    const lane = slow ? 'slow' : quickRun >= QUICK_RUN ? 'fast' : (pace?.lane ?? 'new')
    this.paces.delete(endpointId)
    this.paces.set(endpointId, { lane, quickRun })
    if (this.paces.size > PACES_KEPT) this.paces.delete(this.paces.keys().next().value!)
  }

  private roomOf(endpointId: string, lane: SendLane): number {
    return PER_ENDPOINT[lane] - (this.out.get(endpointId)?.length ?? 0)
  }
}
