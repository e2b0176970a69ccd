/** A node of the tree ClickHouse's EXPLAIN prints: its line's text (indentation removed), and the lines under it. */
export interface ExplainNode {
  text: string
  children: ExplainNode[]
}

/**
 * The tree of an EXPLAIN AST or EXPLAIN QUERY TREE answer, one line per node, a node's children indented deeper than
 * it (by any amount: AST indents by one space, QUERY TREE by two). Its root is a node without text.
 */
export function explainTree(lines: readonly string[]): ExplainNode {
  const root: ExplainNode = { text: '', children: [] }
  const open: { depth: number; node: ExplainNode }[] = [{ depth: -1, node: root }]
  for (const line of lines) {
    const text = line.trimStart()
    if (text === '') continue
    const depth = line.length - text.length
    while (open.length > 1 && open.at(-1)!.depth >= depth) open.pop()
    const node = { text: text.trimEnd(), children: [] }
    open.at(-1)!.node.children.push(node)
    open.push({ depth, node })
  }
  return root
}

/** Every node under `root`, depth first. */
export function* nodesOf(root: ExplainNode): Generator<ExplainNode> {
  for (const child of root.children) {
    yield child
    yield* nodesOf(child)
  }
}

/** The first word of a node's text: its kind (`Function`, `TableIdentifier`, `TABLE`, `FUNCTION`…). */
export const kindOf = (node: ExplainNode): string => node.text.split(' ', 1)[0]!

/** An AST node's name: the word after its kind (`Function count` → `count`), without its alias or child count. */
export const astNameOf = (node: ExplainNode): string => node.text.split(' ')[1] ?? ''

/** A QUERY TREE node's field (`function_name: count` → `count`), if its line has it. */
export function fieldOf(node: ExplainNode, field: string): string | undefined {
  const at = node.text.indexOf(`${field}: `)
  if (at < 0) return undefined
  const rest = node.text.slice(at + field.length + 2)
  // Values are separated by `, `; a constant's value may itself hold commas, so it is read to the type that follows.
  const end = field === 'constant_value' ? rest.lastIndexOf(', constant_value_type: ') : rest.indexOf(', ')
  return end < 0 ? rest : rest.slice(0, end)
}
