import type { CommandName } from '../shared/config/config.js'
import type { CommandModule } from './command-module.js'

export interface Command {
  summary: string
  /** Loaded only when the command runs: a verifier never loads the control plane's code, nor it the verifier's. */
  load(): Promise<CommandModule>
}

/** The commands that serve (and keep running), as against the one-shot root-key commands. */
export const SERVERS: ReadonlySet<CommandName> = new Set<CommandName>(['control-plane', 'verifier', 'dev'])

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
  'root-key list': {
    summary: 'Lists the stored root keys (id, name, start, permissions, created, last used), never a key.',
    load: () => import('./root-key-list-command.js'),
  },
  'root-key revoke': {
    summary:
      'Revokes a root key: every control plane refuses it from its next call on, every verifier within the bound.',
    load: () => import('./root-key-revoke-command.js'),
  },
  'root-key roll': {
    summary: 'Replaces a root key by a new one with the same name and permissions (printed once); revokes the old.',
    load: () => import('./root-key-roll-command.js'),
  },
  'root-key bootstrap disable': {
    summary: 'Makes every control plane on this Redis refuse KEYGATE_ROOT_KEY (needs a stored root key with *).',
    load: () => import('./root-key-bootstrap-command.js').then((module) => module.disable),
  },
  'root-key bootstrap enable': {
    summary: 'Lets control planes accept KEYGATE_ROOT_KEY again.',
    load: () => import('./root-key-bootstrap-command.js').then((module) => module.enable),
  },
}
