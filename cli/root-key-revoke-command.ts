import { CLI_ACTOR } from '../control-plane/audit/audit-log.js'
import { rootKeyIdConfig } from '../shared/config/config.js'
import { withRootKeys } from './root-key-session.js'

/** `keygate root-key revoke <rootKeyId>`: refused by every control plane from its next call on. */
export async function run(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const config = rootKeyIdConfig('root-key revoke', argv, env)
  const revoked = await withRootKeys(config, (rootKeys) => rootKeys.revoke(CLI_ACTOR, config.rootKeyId))
  process.stderr.write(`Revoked root key ${revoked.id}${revoked.name === undefined ? '' : ` (${revoked.name})`}.\n`)
  return 0
}
