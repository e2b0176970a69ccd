#!/usr/bin/env node
/**
 * `npm run check:deploy`: renders every kustomization under deploy/, validates each object offline and checks
 * it against our rules, and lints the Dockerfile. Prints each problem; exits 1 if there is any.
 * `--root DIR` checks another checkout (default: this one). A placeholder (`api_REPLACE_ME`) left in a manifest is
 * a problem, except in this checkout's own examples (KEYGATE_TEMPLATES) while git has them as committed, where it
 * is printed as a note.
 */
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { checkDeployTree, KEYGATE_TEMPLATES } from './check-tree.js'
import { pristineTemplates } from './pristine-templates.js'
import { formatProblem } from './problem.js'

// dist/deploy/check/ → the repository root.
const REPOSITORY = fileURLToPath(new URL('../../../', import.meta.url))

const { values } = parseArgs({ options: { root: { type: 'string' } } })
const root = resolve(values.root ?? REPOSITORY)
// Only this checkout's examples are templates, and only while unedited: deploy/README has users fill them in place,
// so one edited but still holding a placeholder is a problem, as is a manifest anywhere else that keeps one.
const own = root === resolve(REPOSITORY)
const templates = own ? pristineTemplates(root, KEYGATE_TEMPLATES) : []
const { problems, checked, notes } = await checkDeployTree({ root, templates })
for (const problem of problems) process.stdout.write(`${formatProblem(problem)}\n`)
for (const note of notes) process.stdout.write(`note (a template: set it before applying): ${formatProblem(note)}\n`)
process.stdout.write(
  `${problems.length === 0 ? 'ok' : `${problems.length} problem(s)`}: checked ${checked.join(', ')}\n`,
)
process.exitCode = problems.length === 0 ? 0 : 1
