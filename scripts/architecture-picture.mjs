#!/usr/bin/env node
// The house's dependency picture, drawn from the code: an arrow from one folder to another when a file in the first
// imports one in the second (relative imports of the files git tracks, type-only and import() ones too; tests aside).
// The folders are the top-level ones and, inside control-plane/, its root, its common folders and each domain (the
// keys of DOMAIN_IMPORTS in eslint.config.js).
//
//   node scripts/architecture-picture.mjs            prints the picture: a Mermaid flowchart between its markers
//   node scripts/architecture-picture.mjs --write    puts it into docs/architecture.md, between the same markers
//   node scripts/architecture-picture.mjs --domains  prints the domains' imports (what DOMAIN_IMPORTS is checked
//                                                    against), each with the imports that make it, and their cycles
//
// test/unit/architecture-picture.test.ts fails when docs/architecture.md holds another picture than this one.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { DOMAIN_IMPORTS } from '../eslint.config.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const PAGE = 'docs/architecture.md'
const BEGIN = '<!-- house:begin -->'
const END = '<!-- house:end -->'

/** The top-level folders of the house, in the picture's order; test/ is drawn only as what they import. */
const HOUSE = ['cli', 'control-plane', 'verifier', 'shared', 'console', 'portal', 'bench', 'deploy', 'scripts']
const DOMAINS = Object.keys(DOMAIN_IMPORTS).sort()
const SOURCE = /\.(ts|tsx|mjs)$/

/**
 * Where a file sits in the picture, outermost box first: `['cli']`, `['control-plane', 'http']`, `['control-plane',
 * 'domains', 'keys']`; its root's files are `['control-plane', 'root']`.
 */
function placeOf(path) {
  const [top, folder, ...rest] = path.split('/')
  if (top !== 'control-plane') return [top]
  if (rest.length === 0) return [top, 'root']
  return DOMAINS.includes(folder) ? [top, 'domains', folder] : [top, folder]
}

/** The files git tracks in the house's folders (untracked scratch files are not the project's, as for the linter). */
function sourceFiles() {
  const git = spawnSync('git', ['ls-files', '-z', '--cached', '--', ...HOUSE], { cwd: root, encoding: 'utf8' })
  if (git.status !== 0) throw new Error(`git ls-files failed: ${git.stderr}`)
  return git.stdout
    .split('\0')
    .filter((file) => SOURCE.test(file) && existsSync(join(root, file)))
    .sort()
}

/** Every relative import of the house's files: `{from, to}`, repository paths (`to` as written: `.js` for a `.ts`). */
function imports() {
  const found = []
  for (const from of sourceFiles()) {
    // TypeScript's scanner: it skips comments and strings, and finds import(), type-only imports and re-exports.
    const { importedFiles } = ts.preProcessFile(readFileSync(join(root, from), 'utf8'), true, true)
    for (const { fileName } of importedFiles)
      if (fileName.startsWith('./') || fileName.startsWith('../'))
        found.push({ from, to: posix.normalize(posix.join(posix.dirname(from), fileName)) })
  }
  return found
}

/**
 * An import drawn between the boxes that part its two files: the children of the innermost box holding both (an
 * import from cli/ to control-plane/keys/ is cli → control-plane; one from control-plane/http/ to a domain is http →
 * domains). Undefined when both files are in one box.
 */
function arrowOf({ from, to }) {
  const [a, b] = [placeOf(from), placeOf(to)]
  let depth = 0
  while (depth < a.length && depth < b.length && a[depth] === b[depth]) depth += 1
  if (depth === a.length || depth === b.length) return undefined
  return { from: a.slice(0, depth + 1).join('/'), to: b.slice(0, depth + 1).join('/') }
}

/** The arrows: each box's set of the boxes it imports. */
function arrows(found) {
  const map = new Map()
  for (const arrow of found.map(arrowOf)) {
    if (!arrow) continue
    map.set(arrow.from, (map.get(arrow.from) ?? new Set()).add(arrow.to))
  }
  return map
}

const id = (box) =>
  box
    .replace(/^control-plane\/domains\//, 'd_')
    .replace(/^control-plane\//, 'cp_')
    .replace(/\W/g, '_')
const LABELS = { 'control-plane/root': 'root *.ts', 'control-plane/domains': 'domains' }
// A folder's name ends in a slash; a file at the repository's root (eslint.config.js) keeps its own.
const label = (box) => LABELS[box] ?? (/\.\w+$/.test(box) ? box : `${box.split('/').pop()}/`)

/** The picture: one Mermaid flowchart, boxes as subgraphs, an arrow each way between two folders drawn as one. */
function picture(found) {
  const map = arrows(found)
  const controlPlane = [...new Set([...map.keys(), ...[...map.values()].flatMap((to) => [...to])])]
    .filter((box) => box.startsWith('control-plane/') && !box.startsWith('control-plane/domains'))
    .sort()
  const outside = [...new Set([...map.values()].flatMap((to) => [...to]))].filter(
    (box) => !HOUSE.includes(box) && !box.startsWith('control-plane/'),
  )
  const lines = ['```mermaid', 'flowchart LR']
  for (const top of [...HOUSE, ...outside.sort()]) {
    if (top !== 'control-plane') {
      lines.push(`  ${id(top)}["${label(top)}"]`)
      continue
    }
    lines.push(`  subgraph ${id(top)} ["control-plane/"]`)
    for (const box of controlPlane) lines.push(`    ${id(box)}["${label(box)}"]`)
    lines.push(`    subgraph ${id('control-plane/domains')} ["domains"]`)
    for (const domain of DOMAINS) lines.push(`      ${id(`control-plane/domains/${domain}`)}["${domain}/"]`)
    lines.push('    end', '  end')
  }
  const has = (from, to) => map.get(from)?.has(to) ?? false
  // Between the top-level folders, then inside control-plane/, then between domains: one way, then both ways.
  const LEVELS = [
    ['between the top-level folders', 1],
    ['inside control-plane/', 2],
    ['between the domains', 3],
  ]
  for (const [title, depth] of LEVELS) {
    const froms = [...map.keys()].filter((box) => box.split('/').length === depth).sort()
    lines.push(`  %% ${title}`)
    for (const from of froms) {
      const only = [...map.get(from)].filter((to) => !has(to, from)).sort()
      if (only.length) lines.push(`  ${id(from)} --> ${only.map(id).join(' & ')}`)
    }
    for (const from of froms)
      for (const to of [...map.get(from)].sort())
        if (has(to, from) && from < to) lines.push(`  ${id(from)} <--> ${id(to)}`)
  }
  lines.push('```')
  return [
    BEGIN,
    '<!-- Drawn from the imports by `node scripts/architecture-picture.mjs --write`: edit the code, not this. -->',
    '',
    ...lines,
    END,
  ].join('\n')
}

/** The domains' graph: each domain's imported domains, with the imports that make each edge. */
function domainGraph(found) {
  const graph = new Map(DOMAINS.map((domain) => [domain, new Map()]))
  for (const edge of found) {
    const [a, b] = [placeOf(edge.from), placeOf(edge.to)]
    if (a[1] !== 'domains' || b[1] !== 'domains' || a[2] === b[2]) continue
    const targets = graph.get(a[2])
    targets.set(b[2], [...(targets.get(b[2]) ?? []), edge])
  }
  return graph
}

/** Every elementary cycle of the graph, each once, from its alphabetically first domain. */
function cyclesOf(graph) {
  const cycles = []
  const walk = (start, path) => {
    for (const next of [...graph.get(path.at(-1)).keys()].sort()) {
      if (next === start) cycles.push([...path, start])
      else if (next > start && !path.includes(next)) walk(start, [...path, next])
    }
  }
  for (const start of DOMAINS) walk(start, [start])
  return cycles.sort((a, b) => a.length - b.length || a.join().localeCompare(b.join()))
}

/** The graph's strongly connected parts of more than one domain: where every domain reaches every other. */
function tangles(graph) {
  const reach = (start) => {
    const seen = new Set()
    const visit = (domain) => {
      for (const next of graph.get(domain).keys()) {
        if (seen.has(next)) continue
        seen.add(next)
        visit(next)
      }
    }
    visit(start)
    return seen
  }
  const reaches = new Map(DOMAINS.map((domain) => [domain, reach(domain)]))
  const parts = new Map()
  for (const domain of DOMAINS) {
    const part = DOMAINS.filter((other) => reaches.get(domain).has(other) && reaches.get(other).has(domain))
    if (part.length > 1) parts.set(part.join(), part)
  }
  return [...parts.values()]
}

/** What --domains prints: the table as the code has it, the imports behind each edge, how it and the table differ. */
function describeDomains(found) {
  const graph = domainGraph(found)
  const out = ["The domains' imports, as the code has them (paste into DOMAIN_IMPORTS, eslint.config.js):"]
  const key = (domain) => (/^[a-z]+$/.test(domain) ? domain : `'${domain}'`)
  for (const [domain, targets] of graph) {
    const listed = [...targets.keys()].sort().map((to) => `'${to}'`)
    out.push(`  ${key(domain)}: [${listed.join(', ')}],`)
  }
  out.push('', 'Each edge and the imports that make it:')
  for (const [domain, targets] of graph)
    for (const [to, edges] of [...targets].sort(([a], [b]) => a.localeCompare(b))) {
      out.push(`  ${domain} → ${to}`)
      for (const edge of edges) out.push(`      ${edge.from} → ${edge.to}`)
    }
  const unlisted = [...graph].flatMap(([d, to]) =>
    [...to.keys()].filter((t) => !DOMAIN_IMPORTS[d].includes(t)).map((t) => `${d} → ${t}`),
  )
  const unused = DOMAINS.flatMap((d) => DOMAIN_IMPORTS[d].filter((t) => !graph.get(d).has(t)).map((t) => `${d} → ${t}`))
  out.push('', `Imported, but not in DOMAIN_IMPORTS (the linter refuses them): ${unlisted.join(', ') || 'none'}`)
  out.push(`In DOMAIN_IMPORTS, but not imported: ${unused.join(', ') || 'none'}`)
  const cycles = cyclesOf(graph)
  out.push('', `Cycles (domains that import each other, directly or through others): ${cycles.length}`)
  for (const tangle of tangles(graph)) out.push(`  each reaches every other: ${tangle.join(', ')}`)
  for (const cycle of cycles) out.push(`  ${cycle.join(' → ')}`)
  return out.join('\n')
}

/** The page with its picture replaced; an error if it has no markers to replace between. */
function withPicture(page, block) {
  const start = page.indexOf(BEGIN)
  const end = page.indexOf(END)
  if (start === -1 || end < start) throw new Error(`${PAGE} has no ${BEGIN} … ${END} to draw the picture between`)
  return page.slice(0, start) + block + page.slice(end + END.length)
}

const found = imports()
const [flag] = process.argv.slice(2)
if (flag === '--write') {
  const path = join(root, PAGE)
  writeFileSync(path, withPicture(readFileSync(path, 'utf8'), picture(found)))
} else if (flag === '--domains') {
  console.log(describeDomains(found))
} else if (flag === undefined) {
  console.log(picture(found))
} else {
  console.error(`unknown option ${flag}: give --write, --domains or nothing (see the top of this script)`)
  process.exit(2)
}
