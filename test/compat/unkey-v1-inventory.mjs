/* global process, console, URL */
// Lists every test of Unkey's v1 route tests (apps/api/src/routes/v1_*.test.ts at ccfc028d, the last commit with
// apps/api) by its full title, with describe.each / test.each tables expanded and runCommonRouteTests counted as
// the six tests it defines, and writes test/compat/unkey-v1-inventory.json. Only titles are kept: no code.
//
//   node test/compat/unkey-v1-inventory.mjs [git-dir]   (default: /work/.mirror/unkeyed+unkey/repo)
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import ts from 'typescript'

const COMMIT = 'ccfc028d'
const gitDir = process.argv[2] ?? '/work/.mirror/unkeyed+unkey/repo'
const git = (...args) => execFileSync('git', [`--git-dir=${gitDir}`, ...args], { encoding: 'utf8' })

/** The tests runCommonRouteTests defines (apps/api/src/pkg/testutil/common-tests.ts), by title. */
const COMMON = [
  'disabled workspace > should reject the request',
  'shared permissions tests > without a key',
  'shared permissions tests > with wrong key',
  'shared permissions tests > without permission > no roles > should reject',
  'shared permissions tests > without permission > wrong roles > should reject',
  'shared permissions tests > without permission > full access to wrong api > should reject',
]

const files = git('ls-tree', '--name-only', COMMIT, 'apps/api/src/routes/')
  .split('\n')
  .filter((path) => /\/(v1|legacy)_[^/]*\.test[^/]*$/.test(path))

const literalText = (node) => (ts.isStringLiteralLike(node) ? node.text : node.getText())

/** A property path (`expected.valid`) read out of an object literal row. */
function lookUp(row, expression) {
  const path = []
  let node = expression
  while (ts.isPropertyAccessExpression(node)) {
    path.unshift(node.name.text)
    node = node.expression
  }
  if (!ts.isIdentifier(node)) return undefined
  path.unshift(node.text)
  let value = row
  for (const key of path) {
    if (!value || !ts.isObjectLiteralExpression(value)) return undefined
    const property = value.properties.find((p) => p.name && p.name.getText() === key)
    if (!property || !ts.isPropertyAssignment(property)) return undefined
    value = property.initializer
  }
  return value && literalText(value)
}

/** A title as vitest prints it: a template literal filled from the each-row (`returns valid=${expected.valid}`). */
function titleOf(node, row) {
  if (!ts.isTemplateExpression(node) || !row) return literalText(node)
  let text = node.head.text
  for (const span of node.templateSpans) {
    // The row's fields are destructured in the callback, so `expected.valid` is read as row.expected.valid.
    text += (lookUp(row, span.expression) ?? `\${${span.expression.getText()}}`) + span.literal.text
  }
  return text
}

/** `$name`-style placeholders of an each-title, filled from an object literal row. */
function fill(title, row) {
  if (!row || !ts.isObjectLiteralExpression(row)) return title
  return title.replace(/\$([a-zA-Z_]+)/g, (whole, key) => {
    const property = row.properties.find((p) => p.name && p.name.getText() === key)
    if (!property || !ts.isPropertyAssignment(property)) return whole
    return literalText(property.initializer)
  })
}

function testsOf(source) {
  const found = []
  /** Top-level `const NAME = [...]` arrays, for the tests made in a loop over one. */
  const arrays = new Map()
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue
    for (const declaration of statement.declarationList.declarations) {
      if (
        ts.isIdentifier(declaration.name) &&
        declaration.initializer &&
        ts.isArrayLiteralExpression(declaration.initializer)
      )
        arrays.set(declaration.name.text, declaration.initializer.elements)
    }
  }
  const visit = (node, path, outer) => {
    // for (const row of ROWS) test(...): one test per row of a top-level array (titles numbered: they are computed).
    if (ts.isForOfStatement(node) && ts.isIdentifier(node.expression)) {
      const rows = arrays.get(node.expression.text)
      if (rows) {
        const before = found.length
        visit(node.statement, path, outer)
        const made = found.splice(before)
        rows.forEach((_, i) => {
          for (const test of made) found.push({ ...test, title: `${test.title} #${i + 1}` })
        })
        return
      }
    }
    if (ts.isCallExpression(node)) {
      const callee = node.expression
      // runCommonRouteTests({...})
      if (ts.isIdentifier(callee) && callee.text === 'runCommonRouteTests') {
        for (const title of COMMON) found.push({ title: [...path, title].join(' > '), status: 'run' })
        return
      }
      // describe(...) / test(...) / it(...), with .skip/.todo/.only/.each([...]) forms
      let base = callee
      let rows
      let modifier
      if (ts.isCallExpression(callee) && ts.isPropertyAccessExpression(callee.expression)) {
        // describe.each([...])(title, fn)
        if (
          callee.expression.name.text === 'each' &&
          callee.arguments[0] &&
          ts.isArrayLiteralExpression(callee.arguments[0])
        ) {
          rows = callee.arguments[0].elements
          base = callee.expression.expression
        }
      } else if (ts.isPropertyAccessExpression(callee)) {
        modifier = callee.name.text
        base = callee.expression
      }
      if (ts.isIdentifier(base) && ['describe', 'test', 'it'].includes(base.text) && node.arguments[0]) {
        const status = modifier === 'skip' || modifier === 'todo' ? modifier : 'run'
        for (const row of rows ?? [undefined]) {
          const named = fill(titleOf(node.arguments[0], row ?? outer), row)
          if (base.text === 'describe') {
            for (const argument of node.arguments.slice(1)) visit(argument, [...path, named], row ?? outer)
          } else {
            found.push({ title: [...path, named].join(' > '), status })
          }
        }
        return
      }
    }
    ts.forEachChild(node, (child) => visit(child, path, outer))
  }
  visit(source, [], undefined)
  return found
}

const inventory = []
for (const path of files) {
  const file = path.split('/').pop()
  const text = git('show', `${COMMIT}:${path}`)
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const tests = testsOf(source)
  // Skipped files (.test.ts.skipped, .test_disabled.ts) are listed too: their tests never ran in Unkey's CI.
  const fileStatus = /\.test\.ts$/.test(file) ? 'run' : 'disabled'
  for (const test of tests)
    inventory.push({ file, title: test.title, status: fileStatus === 'run' ? test.status : fileStatus })
}
writeFileSync(
  new URL('./unkey-v1-inventory.json', import.meta.url),
  JSON.stringify({ commit: COMMIT, tests: inventory }, null, 2) + '\n',
)
console.log(`${inventory.length} tests in ${files.length} files`)
