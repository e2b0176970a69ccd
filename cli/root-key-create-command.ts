import { CLI_ACTOR } from '../control-plane/audit/audit-log.js'
import { rootKeyCreateConfig } from '../shared/config/config.js'
import { withRootKeys } from './root-key-session.js'

/** `keygate root-key create`: stores a new root key (its hash) and prints the key once on stdout (for `$(…)`). */
export async function run(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const config = rootKeyCreateConfig(argv, env)
  const { record, key } = await withRootKeys(config, (rootKeys) =>
    rootKeys.create(CLI_ACTOR, { name: config.name, permissions: config.permissions }),
  )
  process.stderr.write(
    `Created root key ${record.id} with permissions ${record.permissions.join(',')}. It is shown only this once:\n`,
  )
  process.stdout.write(`${key}\n`)
  return 0
}
