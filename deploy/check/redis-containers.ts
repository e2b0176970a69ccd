import type { IContainer } from 'kubernetes-models/v1/Container'
import { referencesIn } from './env-references.js'
import { imageName } from './pod-templates.js'

const REDIS_IMAGES = new Set(['redis', 'valkey'])

export function isRedisContainer(container: IContainer): boolean {
  return REDIS_IMAGES.has(imageName(container.image))
}

/**
 * What Keygate requires of its Redis (README, "Running on Redis"), read from the server's command line:
 * the append-only file on, fsync `always` or `everysec`, never evicting a key, and a password (a
 * NetworkPolicy alone admits any pod that carries the right label). Probes that run redis-cli must then
 * authenticate too.
 */
export function checkRedisContainer(container: IContainer): string[] {
  const argv = [...(container.command ?? []), ...(container.args ?? [])]
  const option = (name: string): string | undefined => {
    const at = argv.lastIndexOf(`--${name}`)
    return at === -1 ? undefined : argv[at + 1]
  }
  const problems: string[] = []
  if (option('appendonly') !== 'yes')
    problems.push('Redis runs without --appendonly yes: a restart would lose keys Keygate acknowledged')
  const fsync = option('appendfsync')
  if (fsync !== undefined && fsync !== 'always' && fsync !== 'everysec')
    problems.push(`--appendfsync ${fsync}: use always (no acknowledged write lost) or everysec (up to a second)`)
  const policy = option('maxmemory-policy')
  if (policy !== undefined && policy !== 'noeviction')
    problems.push(`--maxmemory-policy ${policy}: Keygate's Redis must never evict a key (noeviction)`)
  const password = option('requirepass')
  if (!password)
    problems.push(
      'Redis runs without --requirepass: any pod that reaches its port can read and rewrite every key (take the password from a Secret: --requirepass $(REDIS_PASSWORD))',
    )
  const defined = new Set((container.env ?? []).map((variable) => variable.name))
  for (const name of referencesIn(password ?? '').filter((reference) => !defined.has(reference))) {
    problems.push(
      `--requirepass uses $(${name}), which the container does not define: Redis would take the text $(${name}) as its password`,
    )
  }
  const authenticated = defined.has('REDISCLI_AUTH')
  for (const [field, probe] of [
    ['readinessProbe', container.readinessProbe],
    ['livenessProbe', container.livenessProbe],
    ['startupProbe', container.startupProbe],
  ] as const) {
    const command = (probe?.exec?.command ?? []).join(' ')
    // -a, --pass and -u (a URL with the password) authenticate too, with the password on the command line.
    if (password && !authenticated && command.includes('redis-cli') && !/(^|\s)(-a|--pass|-u)\s/.test(command)) {
      problems.push(
        `${field} runs redis-cli, but the container sets no REDISCLI_AUTH: Redis answers NOAUTH and the probe fails for ever`,
      )
    }
  }
  return problems
}
