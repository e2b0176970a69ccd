#!/usr/bin/env node
// The programs `npm test` runs for real (system-tools.json), each with the Debian/Ubuntu package that installs it.
// Run first by `npm test`: it installs what is missing when it can (root, apt-get on the PATH), and otherwise stops
// at once with the one command to run, rather than failing a few tests minutes later.
import { spawnSync } from 'node:child_process'
import { accessSync, constants, readFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'

// JSON, so that test/e2e/fresh-machine.test.ts expects the same list.
const TOOLS = JSON.parse(readFileSync(join(import.meta.dirname, 'system-tools.json'), 'utf8'))

// Each bin directory's sbin sibling too: Debian installs nginx in /usr/sbin, which a non-root PATH lacks (the nginx
// tests look there too). Derived from the PATH, not a fixed list, so that a PATH without a tool hides it entirely.
const searchDirs = () =>
  (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .flatMap((dir) => (/\/bin\/?$/.test(dir) ? [dir, dir.replace(/\/bin\/?$/, '/sbin')] : [dir]))

function found(tool) {
  return searchDirs().some((dir) => {
    try {
      accessSync(join(dir, tool.program), constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

const missing = () => TOOLS.filter((tool) => !found(tool))
const onPath = (program) => found({ program })
const canInstall = () => process.getuid?.() === 0 && onPath('apt-get')

function aptGet(args) {
  const run = spawnSync('apt-get', args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  })
  return run.status === 0
}

let absent = missing()
let installed = false
if (absent.length > 0 && canInstall()) {
  const packages = absent.map((tool) => tool.apt)
  console.log(`npm test: installing from Debian's packages: ${packages.join(' ')}`)
  // Already-known packages install without a refresh; on a fresh machine the lists are empty: refresh once. Without
  // recommends: each tool's own dependencies only (prometheus would pull its node exporter, chromium a desktop).
  const install = ['install', '-y', '-qq', '--no-install-recommends', ...packages]
  if (!aptGet(install)) {
    aptGet(['update', '-qq'])
    aptGet(install)
  }
  installed = true
  absent = missing()
}
if (absent.length > 0) {
  const command = `sudo apt-get install -y --no-install-recommends ${absent.map((tool) => tool.apt).join(' ')}`
  console.error(
    [
      installed
        ? 'npm test: apt-get ran, but these programs are still not on the PATH:'
        : `npm test: ${absent.length === 1 ? 'a program the tests run is' : 'programs the tests run are'} not installed:`,
      ...absent.map((tool) => `  ${tool.program} (Debian/Ubuntu package ${tool.apt}), for ${tool.why}`),
      '',
      'Install, then run npm test again:',
      '',
      `  ${command}`,
      '',
    ].join('\n'),
  )
  process.exit(1)
}
