import { CLI_ACTOR } from '../control-plane/audit/audit-log.js'
import { rootKeyBootstrapConfig } from '../shared/config/config.js'
import type { CommandModule } from './command-module.js'
import { withRootKeys } from './root-key-session.js'

/**
 * `keygate root-key bootstrap disable|enable`: turns the bootstrap root key (KEYGATE_ROOT_KEY) off or back on for
 * every control plane on this store, at their next call, whatever their environment says. Off only once a stored
 * root key with `*` exists. The switch lives in the store, so the variable can stay in a deployment's Secret.
 */
function bootstrapCommand(enabled: boolean): CommandModule {
  return {
    async run(argv, env) {
      const command = enabled ? 'root-key bootstrap enable' : 'root-key bootstrap disable'
      const config = rootKeyBootstrapConfig(command, argv, env)
      await withRootKeys(config, (rootKeys) => rootKeys.setBootstrap(CLI_ACTOR, enabled))
      process.stderr.write(
        enabled
          ? 'The bootstrap root key (KEYGATE_ROOT_KEY) is enabled again, wherever it is set.\n'
          : 'The bootstrap root key (KEYGATE_ROOT_KEY) is disabled: every control plane on this store refuses it.\n',
      )
      return 0
    },
  }
}

export const disable = bootstrapCommand(false)
export const enable = bootstrapCommand(true)
