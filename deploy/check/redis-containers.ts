import type { IContainer } from 'kubernetes-models/v1/Container'
import { imageName } from './pod-templates.js'

const REDIS_IMAGES = new Set(['redis', 'valkey'])

export function isRedisContainer(container: IContainer): boolean {
  return REDIS_IMAGES.has(imageName(container.image))
}

/**
 * What Keygate requires of its Redis (README, "Running on Redis"), read from the server's command line:
 * the append-only file on, fsync `always` or `everysec`, and never evicting a key.
 */
export function checkRedisContainer(container: IContainer): string[] {
  const argv = [...(container.command ?? []), ...(container.args ?? [])]
  const option = (name: string): string | undefined => {
    const at = argv.lastIndexOf(`--${name}`)
    return at === -1 ? undefined : argv[at + 1]
  }
  const problems: string[] = []
  if (option('appendonly') !== 'yes') problems.push('Redis runs without --appendonly yes: a restart would lose keys Keygate acknowledged')
  const fsync = option('appendfsync')
  if (fsync !== undefined && fsync !== 'always' && fsync !== 'everysec') problems.push(`--appendfsync ${fsync}: use always (no acknowledged write lost) or everysec (up to a second)`)
  const policy = option('maxmemory-policy')
  if (policy !== undefined && policy !== 'noeviction') problems.push(`--maxmemory-policy ${policy}: Keygate's Redis must never evict a key (noeviction)`)
  return problems
}
