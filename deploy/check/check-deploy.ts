#!/usr/bin/env node
/**
 * `npm run check:deploy`: renders every kustomization under deploy/, validates each object offline and checks
 * it against our rules, and lints the Dockerfile. Prints each problem; exits 1 if there is any.
 * `--root DIR` checks another checkout (default: this one).
 */
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { checkDeployTree } from './check-tree.js'
import { formatProblem } from './problem.js'

// dist/deploy/check/ → the repository root.
const REPOSITORY = fileURLToPath(new URL('../../../', import.meta.url))

const { values } = parseArgs({ options: { root: { type: 'string' } } })
const root = resolve(values.root ?? REPOSITORY)
const { problems, checked } = await checkDeployTree({ root })
for (const problem of problems) process.stdout.write(`${formatProblem(problem)}\n`)
process.stdout.write(
  `${problems.length === 0 ? 'ok' : `${problems.length} problem(s)`}: checked ${checked.join(', ')}\n`,
)
process.exitCode = problems.length === 0 ? 0 : 1
