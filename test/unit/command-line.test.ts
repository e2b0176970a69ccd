import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { readCommandLine, type CommandLine } from '../../cli/command-line.js'

const version = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version

/** What a line prints to stdout (exit code 0); fails the test if it prints elsewhere or runs a command. */
const printed = (typed: string[]) => {
  const line: CommandLine = readCommandLine(typed)
  expect(line, typed.join(' ')).toMatchObject({ print: 'stdout', exitCode: 0 })
  return 'text' in line ? line.text : ''
}

/** What a line refuses with on stderr (exit code 2). */
const refused = (typed: string[]) => {
  const line = readCommandLine(typed)
  expect(line, typed.join(' ')).toMatchObject({ print: 'stderr', exitCode: 2 })
  return 'text' in line ? line.text : ''
}

/** The `keygate` command line as the bin reads it (the bin itself runs in test/e2e/cli.test.ts). */
describe('the keygate command line', () => {
  it('runs the command a line names, with the rest of the line', () => {
    expect(readCommandLine(['verifier', '--port', '1'])).toEqual({ run: 'verifier', rest: ['--port', '1'] })
    expect(readCommandLine(['root-key', 'revoke', 'root_1'])).toEqual({ run: 'root-key revoke', rest: ['root_1'] })
  })

  it('prints a command\'s help however it is asked: "help <command>", "<command> -h", "-h <command>"', () => {
    const help = printed(['root-key', 'create', '--help'])
    expect(help).toContain('Usage: keygate root-key create [options]')
    for (const typed of [
      ['help', 'root-key', 'create'],
      ['root-key', 'create', '-h'],
      ['-h', 'root-key', 'create'],
      ['--help', 'root-key', 'create'],
    ]) {
      expect(printed(typed), typed.join(' ')).toBe(help)
    }
  })

  it("prints a group's commands however it is asked, every command's for no group", () => {
    const group = printed(['root-key'])
    expect(group).toContain('Usage: keygate root-key <command> [options]')
    expect(group).not.toContain('  control-plane')
    for (const typed of [
      ['root-key', '--help'],
      ['help', 'root-key'],
      ['-h', 'root-key'],
    ]) {
      expect(printed(typed), typed.join(' ')).toBe(group)
    }
    const all = printed([])
    expect(all).toContain('Usage: keygate <command> [options]')
    for (const typed of [['--help'], ['-h'], ['help'], ['help', '-h']])
      expect(printed(typed), typed.join(' ')).toBe(all)
  })

  it('names an unknown command as typed, with the usage of the group it is in', () => {
    const nonsense = refused(['help', 'nonsense'])
    expect(nonsense).toContain('keygate: unknown command "nonsense"\n')
    expect(refused(['-h', 'nonsense'])).toBe(nonsense)
    expect(refused(['verifer', '--port', '1'])).toContain(
      'unknown command "verifer --port 1" (did you mean keygate verifier?)',
    )
    const stray = refused(['root-key', '--frobnicate'])
    expect(stray).toContain('unknown command "root-key --frobnicate"')
    expect(stray).toContain('Usage: keygate root-key <command> [options]')
  })

  it('prints the version for --version anywhere, for -v and version alone, and refuses more after those', () => {
    for (const typed of [['--version'], ['dev', '--version'], ['-v'], ['version'], ['version', '--help']]) {
      expect(printed(typed), typed.join(' ')).toBe(`keygate ${version}\n`)
    }
    expect(refused(['version', 'extra'])).toContain('keygate: version takes nothing after it: "extra"')
    expect(refused(['-v', 'dev'])).toContain('keygate: -v takes nothing after it: "dev"')
  })
})
