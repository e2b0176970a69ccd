/** What both processes ask of a store to report their health: which kind it is, and whether it answers. */
export interface StoreHealth {
  /** `redis` or `memory`, for liveness answers and logs. */
  readonly kind: 'redis' | 'memory'
  /** Throws StoreUnavailableError when the store cannot serve. */
  ping(): Promise<void>
}
