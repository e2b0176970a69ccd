#!/usr/bin/env node
import { startDev } from '../../control-plane/dev-main.js'
import { startControlPlane } from '../../control-plane/main.js'
import { createRootKey } from '../../control-plane/root-key-command.js'
import { startVerifier } from '../../verifier/main.js'
import {
  ConfigError, controlPlaneConfig, devConfig, rootKeyCreateConfig, specs, verifierConfig, type CommandName,
} from '../config/config.js'
import { helpText } from '../config/option-spec.js'
import { closeGracefully } from '../http/graceful-shutdown.js'
import { createLogger } from '../logger.js'

const SUMMARIES: Record<CommandName, string> = {
  'control-plane': 'The management API (apis.*, keys.*) and keys.verifyKey, on Redis.',
  verifier: 'The verifier sidecar: keys.verifyKey from an in-memory cache kept current by Redis change events.',
  dev: 'Control plane and verifier in one process on an in-memory store: no Redis needed; data is lost on exit.',
  'root-key create': 'Stores a new root key (only its hash) in Redis and prints the key once.',
}

const USAGE = `Usage: keygate <command> [options]

Commands:
  control-plane      ${SUMMARIES['control-plane']}
  verifier           ${SUMMARIES.verifier}
  dev                ${SUMMARIES.dev}
  root-key create    ${SUMMARIES['root-key create']}

keygate <command> --help lists the command's options.
`

async function main(argv: string[]): Promise<number> {
  const [first, second] = argv
  const named: string | undefined = first === 'root-key' && second === 'create' ? 'root-key create' : first
  const rest = argv.slice(named === 'root-key create' ? 2 : 1)
  if (named === undefined || !(named in specs)) {
    const known = named === undefined || named === '--help' || named === 'help'
    ;(known ? process.stdout : process.stderr).write(known ? USAGE : `keygate: unknown command ${JSON.stringify(argv.join(' '))}\n\n${USAGE}`)
    return known ? 0 : 2
  }
  const command = named as CommandName
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(helpText(`Usage: keygate ${command} [options]`, SUMMARIES[command], [...specs[command]]))
    return 0
  }
  switch (command) {
    case 'control-plane': {
      const config = controlPlaneConfig(rest, process.env)
      const log = createLogger(config.logLevel, 'control-plane')
      const app = await startControlPlane(config, log)
      closeGracefully(log, config.shutdownGraceMs, config.shutdownDelayMs, app)
      return -1
    }
    case 'verifier': {
      const config = verifierConfig(rest, process.env)
      const log = createLogger(config.logLevel, 'verifier')
      const app = await startVerifier(config, log)
      closeGracefully(log, config.shutdownGraceMs, config.shutdownDelayMs, app)
      return -1
    }
    case 'dev': {
      const config = devConfig(rest, process.env)
      const log = createLogger(config.logLevel, 'dev')
      const dev = await startDev(config, log)
      closeGracefully(log, config.shutdownGraceMs, config.shutdownDelayMs, dev.app)
      process.stdout.write(
        `\nKeygate dev server (in-memory store, no Redis; data is lost on exit)\n` +
        `  URL:      ${dev.url}\n` +
        `  API docs: ${dev.url}/docs\n` +
        `  root key: ${dev.rootKeyGenerated ? dev.rootKey : '(from KEYGATE_ROOT_KEY)'}\n\n` +
        `Try: curl -s -X POST ${dev.url}/v1/apis.createApi -H "Authorization: Bearer $ROOT_KEY" ` +
        `-H 'Content-Type: application/json' -d '{"name":"my-api"}'\n\n`,
      )
      return -1
    }
    case 'root-key create': {
      const config = rootKeyCreateConfig(rest, process.env)
      const { id, key } = await createRootKey(config)
      process.stderr.write(`Created root key ${id} with permissions ${config.permissions.join(',')}. It is shown only this once:\n`)
      process.stdout.write(`${key}\n`)
      return 0
    }
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code)
  },
  (err: unknown) => {
    if (err instanceof ConfigError) {
      process.stderr.write(`keygate: ${err.message}\n`)
      process.exit(2)
    }
    process.stderr.write(`keygate: ${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  },
)
