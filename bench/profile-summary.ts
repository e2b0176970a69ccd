import { readFileSync } from 'node:fs'

/**
 * `node dist/bench/profile-summary.js FILE.cpuprofile [N]`: the N functions with the most self time in a V8 CPU
 * profile, and the share of samples under each of the N heaviest call paths' roots — the text form of a flame
 * graph, for a terminal and for commit messages.
 */
interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

const [file, count = '25'] = process.argv.slice(2)
if (!file) {
  console.error('usage: profile-summary FILE.cpuprofile [N]')
  process.exit(2)
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const self = new Map<number, number>()
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
const total = [...self.values()].reduce((a, b) => a + b, 0)

const where = (node: ProfileNode) => {
  const url = node.callFrame.url.replace(/^file:\/\/.*?node_modules\//, '').replace(/^file:\/\/.*?\/dist\//, '')
  return `${node.callFrame.functionName || '(anonymous)'} ${url}:${node.callFrame.lineNumber + 1}`
}
const bySelf = new Map<string, number>()
for (const [id, time] of self) {
  const key = where(byId.get(id)!)
  bySelf.set(key, (bySelf.get(key) ?? 0) + time)
}
// Inclusive time: a node's self time plus everything under it, summed per function (a function that appears
// under itself is counted once per path, so recursion can exceed 100%: none on the hot path does).
const inclusive = new Map<number, number>()
const visit = (id: number): number => {
  const node = byId.get(id)!
  let time = self.get(id) ?? 0
  for (const child of node.children ?? []) time += visit(child)
  inclusive.set(id, time)
  return time
}
visit(profile.nodes[0]!.id)
const byInclusive = new Map<string, number>()
for (const [id, time] of inclusive) {
  const node = byId.get(id)!
  if (['(root)', '(program)', '(idle)', '(garbage collector)'].includes(node.callFrame.functionName)) continue
  const key = where(node)
  byInclusive.set(key, (byInclusive.get(key) ?? 0) + time)
}
const busy =
  total - [...self].filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)').reduce((a, [, t]) => a + t, 0)
console.log(`inclusive time (share of busy time, ${(busy / 1000).toFixed(0)} ms), top ${count}:`)
for (const [name, time] of [...byInclusive].sort((a, b) => b[1] - a[1]).slice(0, Number(count))) {
  console.log(`${((100 * time) / busy).toFixed(1).padStart(5)}%  ${name}`)
}
console.log(`self time, top ${count} of ${(total / 1000).toFixed(0)} ms sampled:`)
for (const [name, time] of [...bySelf].sort((a, b) => b[1] - a[1]).slice(0, Number(count))) {
  console.log(`${((100 * time) / total).toFixed(1).padStart(5)}%  ${name}`)
}
