import { describe, expect, it } from 'vitest'
import { SEND_LANES, SendLanes } from '../../control-plane/webhooks/delivery/send-lanes.js'

const TIMEOUT_MS = 1_000
const laneIndex = (lane: string) => SEND_LANES.indexOf(lane as never)

describe('SendLanes', () => {
  it('puts an endpoint in a lane by how long its requests hold a slot, not by what they answer', () => {
    const lanes = new SendLanes(TIMEOUT_MS)
    expect(lanes.laneOf('whep_a')).toBe('new')
    for (let n = 0; n < 4; n++) lanes.record('whep_a', 5)
    expect(lanes.laneOf('whep_a')).toBe('new')
    lanes.record('whep_a', 5)
    expect(lanes.laneOf('whep_a')).toBe('fast')
    lanes.record('whep_b', TIMEOUT_MS / 4)
    expect(lanes.laneOf('whep_b')).toBe('slow')
  })

  // Its other slots would otherwise be refilled, each request then held for the rest of a timeout.
  it('takes an endpoint with a request out for a quarter of the timeout as slow from then on', () => {
    const lanes = new SendLanes(TIMEOUT_MS)
    for (let n = 0; n < 5; n++) lanes.record('whep_a', 5)
    const slot = lanes.take('whep_a', 0)!
    expect(slot.lane).toBe('fast')
    expect(lanes.claimLanes(TIMEOUT_MS / 4 - 1).lanes.endpoints.get('whep_a')).toEqual({
      lane: laneIndex('fast'),
      room: 3,
    })
    expect(lanes.claimLanes(TIMEOUT_MS / 4).lanes.endpoints.get('whep_a')).toEqual({ lane: laneIndex('slow'), room: 0 })
    lanes.release(slot)
    expect(lanes.inFlight('fast')).toBe(0)
    expect(lanes.claimLanes(TIMEOUT_MS).lanes.endpoints.get('whep_a')).toEqual({ lane: laneIndex('slow'), room: 1 })
  })
})
