/**
 * The endpoints this control plane is sending a test event to (webhooks.sendTest): one at a time per endpoint, so
 * that a root key with `send_test` holds at most one request open to a receiver per control plane, as the worker's
 * lanes bound real deliveries. Per process: every replica allows one of its own.
 */
export class TestsInFlight {
  private readonly endpoints = new Set<string>()

  /** Marks a test to the endpoint as under way; false (nothing marked) if one already is. */
  start(endpointId: string): boolean {
    if (this.endpoints.has(endpointId)) return false
    this.endpoints.add(endpointId)
    return true
  }

  /** The test to the endpoint is over, however it ended. */
  finish(endpointId: string): void {
    this.endpoints.delete(endpointId)
  }
}
