#!/usr/bin/env node
import { ConfigError, specs, type CommandName } from '../shared/config/config.js'
import { helpText } from '../shared/config/option-spec.js'
import { COMMANDS } from './commands.js'

const USAGE = `Usage: keygate <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(18)} ${command.summary}`)
  .join('\n')}

keygate <command> --help lists the command's options.
`

const isCommand = (name: string | undefined): name is CommandName => name !== undefined && Object.hasOwn(COMMANDS, name)

/** The `keygate` bin: finds the command, answers --help from the option table, loads and runs the command. */
async function main(argv: string[]): Promise<'serving' | number> {
  const [first, second] = argv
  const named = first === 'root-key' && second === 'create' ? 'root-key create' : first
  if (!isCommand(named)) {
    if (named === undefined || named === '--help' || named === 'help') {
      process.stdout.write(USAGE)
      return 0
    }
    process.stderr.write(`keygate: unknown command ${JSON.stringify(argv.join(' '))}\n\n${USAGE}`)
    return 2
  }
  const rest = argv.slice(named === 'root-key create' ? 2 : 1)
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(helpText(`Usage: keygate ${named} [options]`, COMMANDS[named].summary, specs[named]))
    return 0
  }
  const command = await COMMANDS[named].load()
  return command.run(rest, process.env)
}

main(process.argv.slice(2)).then(
  (outcome) => {
    if (outcome !== 'serving') process.exit(outcome)
  },
  (err: unknown) => {
    process.stderr.write(`keygate: ${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(err instanceof ConfigError ? 2 : 1)
  },
)
