import type { ConsoleAnswers } from '../types.js'

/**
 * A POST of the management API (KeygateApi.post, in the browser): webhooks.replay answers a `cursor` when it stopped
 * before the newest kept event.
 */
export type ReplayCall = (operation: 'webhooks.replay', body: object) => Promise<ConsoleAnswers['webhooks.replay']>

/**
 * Sends the endpoint again every kept event it takes since `since` (unix ms): webhooks.replay, then again with each
 * `cursor` it answers until none comes back, since a call queues and looks at a bounded number of events. How many
 * were queued in all.
 */
export async function replayAllSince(post: ReplayCall, endpointId: string, since: number): Promise<number> {
  let total = 0
  let from: { since: number } | { cursor: string } = { since }
  for (;;) {
    const { queued, cursor } = await post('webhooks.replay', { endpointId, ...from })
    total += queued
    if (cursor === undefined) return total
    from = { cursor }
  }
}
