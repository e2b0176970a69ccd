import { invalid } from '../../shared/errors/errors.js'
import { madeAt, type WebhookEvent } from '../../shared/webhook.js'

/** A place in the kept events' order (when each was made, then its id): just after the event it names. */
export interface ReplayPosition {
  /** When that event was made, unix ms: where a listing starts once the event is forgotten. */
  madeAt: number
  eventId: string
}

/** Longest cursor taken: a time and an event id. */
export const REPLAY_CURSOR_MAX_LENGTH = 100

/** The cursor a replay answers to go on after `event`: `<madeAt>.<eventId>`, opaque to callers. */
export function replayCursor(event: WebhookEvent): string {
  return `${madeAt(event)}.${event.id}`
}

/** The place a cursor names; 400 for one no replay answered. */
export function replayPosition(cursor: string): ReplayPosition {
  const match = /^(\d{1,15})\.([A-Za-z0-9_-]{1,64})$/.exec(cursor)
  if (!match) throw invalid('cursor', 'is not a cursor webhooks.replay answered')
  return { madeAt: Number(match[1]), eventId: match[2]! }
}
