#!/usr/bin/env node
// `npm run lint`: Prettier's check and ESLint (typescript-eslint's type-checked rules and the layer rules) over the
// files git tracks, staged ones included. A scratch file of yours beside them is not the project's, and fails
// nothing; outside a git checkout the whole tree is linted.
//
// ESLint's results are cached under .tmp/ by the content of every file it lints and of the configuration it reads
// (the tsconfigs, the lockfile): type-checked rules read other files' types, so a result is reused only when none of
// them changed — a second `npm test` of the same tree, as CI runs one per Node line.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const bin = (name) => join(root, 'node_modules', '.bin', name)

function trackedFiles() {
  const git = spawnSync('git', ['ls-files', '-z', '--cached'], { cwd: root, encoding: 'utf8' })
  if (git.status !== 0) return undefined
  // A file deleted in the working tree but not yet from the index is gone: nothing to lint.
  return git.stdout.split('\0').filter((file) => file && existsSync(join(root, file)))
}

/** Runs a linter over the files (all in one run: ESLint's cache keeps only the files of its last run), or `.`. */
function run(command, args) {
  const result = spawnSync(bin(command), [...args.flags, ...(args.files.length ? args.files : ['.'])], {
    cwd: root,
    stdio: 'inherit',
  })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

const tracked = trackedFiles()
// Prettier skips what .prettierignore leaves out, and files it has no parser for.
run('prettier', { flags: ['--check', '--log-level', 'warn', '--ignore-unknown'], files: tracked ?? [] })

const linted = tracked?.filter((file) => /\.(ts|tsx|js|mjs)$/.test(file))
const key = createHash('sha256')
for (const file of linted ?? [])
  key
    .update(file)
    .update('\0')
    .update(readFileSync(join(root, file)))
    .update('\0')
for (const file of [
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.check.json',
  'console/tsconfig.json',
  'portal/tsconfig.json',
])
  if (existsSync(join(root, file)))
    key
      .update(file)
      .update('\0')
      .update(readFileSync(join(root, file)))
const cacheDir = join(root, '.tmp')
const cache = join(cacheDir, `eslint-${key.digest('hex').slice(0, 16)}.cache`)
// One cache: the tree's. Others are of trees that no longer exist.
if (existsSync(cacheDir))
  for (const old of readdirSync(cacheDir))
    if (/^eslint-[0-9a-f]{16}\.cache$/.test(old) && join(cacheDir, old) !== cache) rmSync(join(cacheDir, old))
run('eslint', {
  flags: ['--cache', '--cache-strategy', 'content', '--cache-location', cache, '--no-warn-ignored'],
  files: linted ?? [],
})
