import type { CommandName } from '../shared/config/config.js'

/** A command's module: runs it, and answers 'serving' (keep the process) or an exit code. */
export interface CommandModule {
  run(argv: string[], env: NodeJS.ProcessEnv): Promise<'serving' | number>
}

export interface Command {
  summary: string
  /** Loaded only when the command runs: a verifier never loads the control plane's code, nor it the verifier's. */
  load(): Promise<CommandModule>
}

export const COMMANDS: Record<CommandName, Command> = {
  'control-plane': {
    summary: 'The management API (apis.*, keys.*) and keys.verifyKey, on Redis.',
    load: () => import('./control-plane-command.js'),
  },
  verifier: {
    summary: 'The verifier sidecar: keys.verifyKey from an in-memory cache kept current by Redis change events.',
    load: () => import('./verifier-command.js'),
  },
  dev: {
    summary: 'Control plane and verifier in one process on an in-memory store: no Redis needed; data is lost on exit.',
    load: () => import('./dev-command.js'),
  },
  'root-key create': {
    summary: 'Stores a new root key (only its hash) in Redis and prints the key once.',
    load: () => import('./root-key-create-command.js'),
  },
}
