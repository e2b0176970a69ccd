import { commandArguments, commandOf, specs, type CommandName } from '../shared/config/config.js'
import { helpText } from '../shared/config/option-spec.js'
import { closestName } from '../shared/closest-name.js'
import { packageVersion } from '../shared/package-root.js'
import { COMMANDS } from './commands.js'

/** What a `keygate` command line asks for: text to print (and the exit code), or a command to run. */
export type CommandLine =
  { print: 'stdout' | 'stderr'; text: string; exitCode: 0 | 2 } | { run: CommandName; rest: string[] }

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
function commandLike(argv: readonly string[]): string | undefined {
  for (const words of [1, 2, 3]) {
    const typed = argv.slice(0, words).join(' ')
    const known = Object.keys(COMMANDS).filter((name) => name.split(' ').length === words)
    const closest = typed.length > 2 ? closestName(typed, known) : undefined
    if (closest) return closest
  }
  return undefined
}

/**
 * Reads a `keygate` command line. Help is asked for as `keygate help <words>`, `keygate <words> --help` (or -h) and
 * `keygate -h <words>`, for a command (its options) or a group (its commands); `--version` anywhere on a line prints
 * the version, as a user adds it to a command they were typing; `-v` and `version` do alone. A line naming no command
 * is answered with the usage of the group it names, or of every command, on stderr with exit code 2.
 */
export function readCommandLine(typed: readonly string[]): CommandLine {
  const [first, ...after] = typed
  const helpAsked = first === 'help' || (first !== undefined && HELP.has(first))
  // What the line names, help put aside: `help root-key create` and `-h root-key create` ask about `root-key create`.
  const named = helpAsked ? after : typed
  if (typed.includes('--version') || ((first === '-v' || first === 'version') && after.every((arg) => HELP.has(arg))))
    return { print: 'stdout', text: `keygate ${packageVersion()}\n`, exitCode: 0 }
  if (first === '-v' || first === 'version') {
    const text = `keygate: ${first} takes nothing after it: ${JSON.stringify(after.join(' '))}\n\n${usage([])}`
    return { print: 'stderr', text, exitCode: 2 }
  }
  const found = commandOf(named)
  if (found && (helpAsked || found.rest.some((arg) => HELP.has(arg))))
    return { print: 'stdout', text: commandHelp(found.command), exitCode: 0 }
  if (found) return { run: found.command, rest: found.rest }
  if (named.length === 0 || (helpAsked && named.every((arg) => HELP.has(arg))))
    return { print: 'stdout', text: usage([]), exitCode: 0 }
  // A group's first words alone (`keygate root-key`, with or without help asked): what it holds.
  const group = groupOf(named)
  if (group && group.rest.every((arg) => HELP.has(arg)))
    return { print: 'stdout', text: usage(group.group), exitCode: 0 }
  const closest = commandLike(named)
  const hint = closest === undefined ? '' : ` (did you mean keygate ${closest}?)`
  const text = `keygate: unknown command ${JSON.stringify(named.join(' '))}${hint}\n\n${usage(group?.group ?? [])}`
  return { print: 'stderr', text, exitCode: 2 }
}

/** A command's --help: its synopsis, summary, arguments and options. */
function commandHelp(command: CommandName): string {
  const argumentsHelp = (commandArguments[command] ?? []).map(
    (argument) => `\n  <${argument.name}>  ${argument.description}`,
  )
  return helpText(
    `Usage: keygate ${synopsis(command)} [options]`,
    COMMANDS[command].summary + argumentsHelp.join(''),
    specs[command],
  )
}
