import { CLI_ACTOR } from '../control-plane/audit/audit-log.js'
import { rootKeyIdConfig } from '../shared/config/config.js'
import { withRootKeys } from './root-key-session.js'

/**
 * `keygate root-key roll <rootKeyId>`: a new root key with the same name and permissions, printed once on stdout;
 * the old one is revoked in the same step.
 */
export async function run(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const config = rootKeyIdConfig('root-key roll', argv, env)
  const { record, key, revoked } = await withRootKeys(config, (rootKeys) => rootKeys.roll(CLI_ACTOR, config.rootKeyId))
  process.stderr.write(
    `Revoked root key ${revoked.id}; created ${record.id} with the same name and permissions. It is shown only this once:\n`,
  )
  process.stdout.write(`${key}\n`)
  return 0
}
