#!/usr/bin/env node
import { accessSync, constants } from 'node:fs'
import { getHeapStatistics } from 'node:v8'
import { commandArguments, commandOf, ConfigError, specs, type CommandName } from '../shared/config/config.js'
import { helpText } from '../shared/config/option-spec.js'
import { closestName } from '../shared/closest-name.js'
import { packageVersion } from '../shared/package-root.js'
import { COMMANDS, SERVERS } from './commands.js'
import { turnOffAllocationSitePretenuring } from './allocation-site-pretenuring.js'
import { holdTickObject } from './tick-object-keeper.js'
import { serverRelaunch } from './server-relaunch.js'

/** Whether `path` is a file this process may execute. */
function runnable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** `process.execve` (Node 22.15 / 23.11 on): not in the @types/node this project builds against (Node 20's). */
type Execve = (file: string, args: string[], env: NodeJS.ProcessEnv) => never

/** `root-key revoke <rootKeyId>`: a command as it is typed. */
const synopsis = (name: CommandName) =>
  [name, ...(commandArguments[name] ?? []).map((argument) => `<${argument.name}>`)].join(' ')

const width = Math.max(...Object.keys(COMMANDS).map((name) => synopsis(name as CommandName).length))

/** The commands whose first words are `group` (`root-key`, `root-key bootstrap`; none: every command). */
const commandsIn = (group: readonly string[]) =>
  (Object.keys(COMMANDS) as CommandName[]).filter((name) => group.every((word, i) => name.split(' ')[i] === word))

/** The usage of a group of commands (`keygate root-key`), or of them all. */
function usage(group: readonly string[]): string {
  const prefix = group.map((word) => `${word} `).join('')
  return `Usage: keygate ${prefix}<command> [options]

Commands:
${commandsIn(group)
  .map((name) => `  ${synopsis(name).padEnd(width)}  ${COMMANDS[name].summary}`)
  .join('\n')}

keygate ${prefix}<command> --help (or -h) lists the command's options; keygate --version (or -v) prints the version.
`
}
const USAGE = usage([])

/**
 * The group of commands a line names when it names no command: its leading words (`root-key`, `root-key bootstrap`)
 * are the first words of some commands; the rest of the line is whatever follows them.
 */
function groupOf(argv: readonly string[]): { group: string[]; rest: string[] } | undefined {
  const words = argv.findIndex((arg) => arg.startsWith('-'))
  const group = argv.slice(0, words < 0 ? argv.length : words)
  if (group.length === 0 || commandsIn(group).length === 0) return undefined
  return { group, rest: argv.slice(group.length) }
}

const HELP = new Set(['--help', '-h'])

/**
 * The command a mistyped one is most likely: its first one, two or three words against the commands of as many words
 * (`verifer --port 1` → verifier), at most one answer.
 */
function commandLike(argv: string[]): string[] {
  for (const words of [1, 2, 3]) {
    const typed = argv.slice(0, words).join(' ')
    const known = Object.keys(COMMANDS).filter((name) => name.split(' ').length === words)
    const closest = typed.length > 2 ? closestName(typed, known) : undefined
    if (closest) return [closest]
  }
  return []
}

/** The `keygate` bin: finds the command, answers --help from the option table, loads and runs the command. */
async function main(typed: string[]): Promise<'serving' | number> {
  // `keygate help root-key create` asks what `keygate root-key create --help` does.
  const argv = typed[0] === 'help' && typed.length > 1 ? [...typed.slice(1), '--help'] : typed
  const found = commandOf(argv)
  // --version anywhere on the line, as a user adds it to a command they were typing; -v and `version` alone.
  if (argv.includes('--version') || argv[0] === '-v' || argv[0] === 'version') {
    process.stdout.write(`keygate ${packageVersion()}\n`)
    return 0
  }
  if (!found) {
    const [first] = argv
    if (first === undefined || HELP.has(first) || first === 'help') {
      process.stdout.write(USAGE)
      return 0
    }
    // A group's first words alone (`keygate root-key`, with or without --help): what it holds.
    const group = groupOf(argv)
    if (group && group.rest.every((arg) => HELP.has(arg))) {
      process.stdout.write(usage(group.group))
      return 0
    }
    const hint = commandLike(argv)
      .map((closest) => ` (did you mean keygate ${closest}?)`)
      .join('')
    const shown = group ? usage(group.group) : USAGE
    process.stderr.write(`keygate: unknown command ${JSON.stringify(argv.join(' '))}${hint}\n\n${shown}`)
    return 2
  }
  const { command: named, rest } = found
  if (rest.some((arg) => HELP.has(arg))) {
    const argumentsHelp = (commandArguments[named] ?? []).map(
      (argument) => `\n  <${argument.name}>  ${argument.description}`,
    )
    process.stdout.write(
      helpText(
        `Usage: keygate ${synopsis(named)} [options]`,
        COMMANDS[named].summary + argumentsHelp.join(''),
        specs[named],
      ),
    )
    return 0
  }
  const execve = (process as unknown as { execve?: Execve }).execve
  const relaunch = serverRelaunch(named, {
    version: process.versions.node,
    execArgv: process.execArgv,
    argv: process.argv,
    nodeOptions: process.env.NODE_OPTIONS,
    canExecve: typeof execve === 'function',
    hasIpcChannel: process.channel !== undefined,
    heapSizeLimit: getHeapStatistics().heap_size_limit,
  })
  // On success it never returns: the same process starts over with the servers' node flags (server-relaunch.ts says
  // why). A failing execve system call aborts the process instead of throwing: the binary is checked first (which
  // rules out the likely failures, not every one), and what does throw (Node's permission model refusing it) leaves
  // the process running as it is.
  if (relaunch && !runnable(process.execPath))
    process.stderr.write(
      `keygate: ${process.execPath} is not executable: running without ${relaunch.added.join(' ')}\n`,
    )
  else if (relaunch) {
    try {
      execve!.call(process, process.execPath, [process.execPath, ...relaunch.args], process.env)
    } catch (err) {
      process.stderr.write(
        `keygate: could not relaunch with ${relaunch.added.join(' ')}, running without: ${err instanceof Error ? err.message : String(err)}\n`,
      )
    }
  }
  // Before the command's modules load: from before the process's first full collection (tick-object-keeper.ts), and
  // before V8 can pretenure what start-up allocates (allocation-site-pretenuring.ts).
  if (SERVERS.has(named)) {
    turnOffAllocationSitePretenuring(process.execArgv)
    holdTickObject()
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
