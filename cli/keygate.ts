#!/usr/bin/env node
import { accessSync, constants } from 'node:fs'
import { getHeapStatistics } from 'node:v8'
import { ConfigError } from '../shared/config/config.js'
import { readCommandLine } from './command-line.js'
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

/** The `keygate` bin: reads its command line (command-line.ts), prints what that answers, or runs the command. */
async function main(typed: string[]): Promise<'serving' | number> {
  const line = readCommandLine(typed)
  if ('print' in line) {
    const stream = line.print === 'stdout' ? process.stdout : process.stderr
    stream.write(line.text)
    return line.exitCode
  }
  const { run: named, rest } = line
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
