import { executionAsyncResource } from 'node:async_hooks'

/**
 * Holds one of Node's tick objects (what `process.nextTick` queues) alive for the life of the process. node:http
 * queues about six a request, each built by an object literal with computed keys (its async ids). When a full garbage
 * collection finds none alive — one finished from a task, between turns of the event loop — the hidden classes that
 * literal builds can die with them, and V8's compiled `nextTick` can then define those keys through its runtime from
 * then on: dozens of calls into C++ a request, for the life of the process. A tick object held keeps those classes
 * alive. It is taken again every second, so that it is always one of the newest (a class V8 replaced is not kept
 * alive by it).
 */
let held: object | undefined

const REFRESH_MS = 1000

function take(): void {
  process.nextTick(() => {
    // Inside a tick's callback the current async resource is that tick's object.
    held = executionAsyncResource()
  })
}

/** Starts holding a tick object; to be called at start-up, before the process has collected anything in full. */
export function holdTickObject(): void {
  take()
  setInterval(take, REFRESH_MS).unref()
}

/** The tick object held now (for tests). */
export function heldTickObject(): object | undefined {
  return held
}
