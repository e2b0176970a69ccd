import { toStoreError } from './redis-connection.js'

/**
 * Replies that say a command was not run because its slot is elsewhere or moving (a Cluster being resharded): MOVED and
 * ASK when the client has not followed them itself (within a pipeline, for one), TRYAGAIN when a multi-key step meets
 * keys half-migrated. Nothing was executed, so sending the command again is safe, writes included.
 */
const REDIRECTED = /^(MOVED|ASK|TRYAGAIN)\b/
/** Attempts after the first, each after a pause that grows (25, 50, 75 ms): a slot moves within milliseconds. */
const REDIRECT_RETRIES = 3
const REDIRECT_PAUSE_MS = 25

const redirected = (err: unknown) => err instanceof Error && err.name === 'ReplyError' && REDIRECTED.test(err.message)

/**
 * One operation of a store part on Redis: its failures as the store's (toStoreError). An operation a reshard
 * redirected is tried again (the client has learnt the new slot owner by then), so that a reshard costs a few
 * milliseconds rather than an error; still redirected after the retries, it is a 503 like any brief outage.
 */
export async function storeCall<T>(operation: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await operation()
    } catch (err) {
      if (attempt < REDIRECT_RETRIES && redirected(err)) {
        await new Promise((resolve) => setTimeout(resolve, REDIRECT_PAUSE_MS * (attempt + 1)))
        continue
      }
      throw toStoreError(err)
    }
  }
}
