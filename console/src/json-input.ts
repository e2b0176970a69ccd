import type { NamedRateLimit } from './types.js'

/** Parses a JSON object typed into a field: the object, undefined for an empty field, or the problem in words. */
export function parseJsonObject(text: string): { value?: Record<string, unknown>; problem?: string } {
  if (!text.trim()) return {}
  try {
    const value = JSON.parse(text) as unknown
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: 'must be a JSON object' }
    return { value: value as Record<string, unknown> }
  } catch (err) {
    return { problem: `not JSON: ${(err as Error).message}` }
  }
}

/** Named rate limits typed as JSON: a list of {name, limit, duration}, or the problem in words. */
export function parseRatelimits(text: string): { value?: NamedRateLimit[]; problem?: string } {
  if (!text.trim()) return { value: [] }
  try {
    const value = JSON.parse(text) as unknown
    if (!Array.isArray(value)) return { problem: 'must be a JSON list of {"name", "limit", "duration"}' }
    return { value: value as NamedRateLimit[] }
  } catch (err) {
    return { problem: `not JSON: ${(err as Error).message}` }
  }
}
