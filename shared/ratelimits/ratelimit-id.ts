import { hash } from 'node:crypto'
import bs58 from 'bs58'

/**
 * v2 names every rate limit by an id (`rl_…`); Keygate keeps a limit by name on the key or identity that holds it
 * (and counts a limit a call defines for the key, or its identity, likewise). The id is made from those two, so one
 * limit has one id in every answer, and two holders' limits of one name have two. Not a secret: it is derived from
 * ids, never from a key's hash.
 */
export function rateLimitId(holderId: string, name: string): string {
  return `rl_${bs58.encode(hash('sha256', `${holderId}\n${name}`, 'buffer')).slice(0, 22)}`
}
