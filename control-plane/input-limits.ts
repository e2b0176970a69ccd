/** Limits on input, documented in the README. */
export const LIMITS = {
  idLength: 256,
  nameLength: 256,
  ownerIdLength: 256,
  environmentLength: 256,
  metaBytes: 64 * 1024,
  metaDepth: 16,
  namesPerKey: 100,
} as const
