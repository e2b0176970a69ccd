import type { AnalyticsEngine } from '../engine/analytics-engine.js'
import { analyticsError } from './analytics-errors.js'
import { engineErrorOf, isEngineFailure } from './engine-errors.js'
import { astNameOf, explainTree, fieldOf, kindOf, nodesOf, type ExplainNode } from './explain-tree.js'
import {
  ALLOWED_FUNCTIONS,
  MAX_PROJECTED_COLUMNS,
  MAX_QUERY_BYTES,
  MAX_QUERY_NODES,
  type QueryDataset,
  type QueryTable,
} from './query-rules.js'

/** A caller's query, checked: one SELECT in ClickHouse's own formatting, and the tables it reads. */
export interface CheckedQuery {
  sql: string
  tables: readonly QueryTable[]
}

const DAY_MS = 86_400_000

/**
 * Checks a caller's SQL with ClickHouse's own parser, so that what is checked is what would run: formatted as one
 * statement (the text sent apart from the statement that formats it: nothing of it is ever spliced into SQL), its
 * syntax tree held to an allow-list (one SELECT; no SETTINGS, FORMAT, INTO OUTFILE or query parameters; functions
 * from ALLOWED_FUNCTIONS, called by name, never through APPLY; no table functions; tables by their unqualified
 * names), then its analysed tree (which tables and CTEs each name is, how many columns it projects, and each lower
 * bound on `time`, evaluated by the engine under `settings`) held to the dataset's tables and their retention. Which
 * rows it then sees is decided when it runs, by the same `settings` (run-query.ts).
 */
export async function checkedQuery(
  engine: AnalyticsEngine,
  text: string,
  dataset: QueryDataset,
  nowMs: number,
  settings: string,
  count: () => Promise<void>,
): Promise<CheckedQuery> {
  if (Buffer.byteLength(text) > MAX_QUERY_BYTES)
    throw analyticsError('query', 'Analytics query exceeds the maximum length')
  const sql = await formatted(engine, text)
  if (hasEscapedName(sql)) {
    throw analyticsError('query', 'Names must not hold line breaks, control characters, backslashes or backquotes')
  }
  const syntax = await explained(engine, `EXPLAIN AST ${sql}`)
  const named = checkSyntax(syntax, dataset)
  // Analysis evaluates constant expressions, scalar subqueries among them: under the settings the query runs with, so
  // that they see and spend no more than it may. Running a subquery is running the query: one that has any is counted
  // before its analysis, or a query refused by its analysis (or failing in it) would run them uncounted, as often as
  // asked, and say what they found in its refusal.
  if (named.subqueries) await count()
  const analysed = await explained(engine, `EXPLAIN QUERY TREE ${sql} SETTINGS ${settings}`, { names: named, dataset })
  const tables = checkAnalysis(analysed, dataset, engine.database, named, nowMs)
  if (!named.subqueries) await count()
  return { sql, tables }
}

/** The query as ClickHouse formats it, on one line: refused when it is not exactly one statement. */
async function formatted(engine: AnalyticsEngine, text: string): Promise<string> {
  let rows
  try {
    rows = await engine.query('SELECT formatQuerySingleLine({query:String}) AS sql', { query: text })
  } catch (err) {
    if (isEngineFailure(err)) throw engineErrorOf(err)
    const message = String(err)
    if (/Empty query/i.test(message)) throw analyticsError('query', 'No SQL statements found', err)
    if (/Multi-statements/i.test(message)) {
      throw analyticsError('query', 'Analytics queries must contain exactly one statement', err)
    }
    throw analyticsError('query', `Invalid SQL syntax: ${syntaxProblem(message)}`, err)
  }
  const sql = rows.length === 1 ? rows[0]!.sql : undefined
  if (typeof sql !== 'string')
    throw new Error('the analytics engine answered formatQuerySingleLine with something else')
  return sql
}

/**
 * Whether a quoted name in `sql`, as ClickHouse formats it (names in backquotes, strings in single quotes, each with
 * backslash escapes), holds an escape. EXPLAIN prints names as they are, a line break in one too, and the trees checked
 * here are read a line per node: a name that breaks its line would add lines of the caller's own to them, moving the
 * lines after it under nodes of its making (a SELECT's 65th column out of its list, a bound on `time` out of its
 * comparison).
 */
function hasEscapedName(sql: string): boolean {
  let quote: string | undefined
  for (let at = 0; at < sql.length; at++) {
    const char = sql[at]
    if (quote === undefined) {
      if (char === "'" || char === '`') quote = char
    } else if (char === '\\') {
      if (quote === '`') return true
      at++
    } else if (char === quote) {
      quote = undefined
    }
  }
  return false
}

/**
 * Where the parser stopped, as it says it, without the statement that asked it (Keygate's, not the caller's): chDB's
 * message ends `. (SYNTAX_ERROR)`, the server client's `. ` (it keeps the exception's name apart).
 */
function syntaxProblem(message: string): string {
  const said =
    /Syntax error[^:]*: (.*?)(?:: In scope |\.\s*(?:\(SYNTAX_ERROR\))?\s*$)/s.exec(message)?.[1] ?? 'cannot be parsed'
  return said.length > 300 ? `${said.slice(0, 300)}…` : said
}

async function explained(
  engine: AnalyticsEngine,
  sql: string,
  analysed?: { names: TableNames; dataset: QueryDataset },
): Promise<ExplainNode> {
  try {
    return explainTree((await engine.query(sql)).map((row) => String(row.explain)))
  } catch (err) {
    // A name that is neither a table of this call nor a CTE of the query: the analyser does not find it. One of the
    // call's own tables not found is the engine's failure (it lacks the table), which engineErrorOf says.
    if (analysed !== undefined && /UNKNOWN_TABLE|Unknown table/i.test(String(err))) {
      const missing = /identifier '([^']+)'/.exec(String(err))?.[1]
      if (missing === undefined || !analysed.dataset.tables.some((table) => table.name === missing)) {
        const name = analysed.names.other[0] ?? missing ?? 'unknown'
        throw analyticsError('table', `Access to table '${name}' is not allowed`, err)
      }
    }
    throw engineErrorOf(err)
  }
}

/**
 * What a query's syntax says of it: the table names it names that are not the dataset's (CTEs, or names refused), and
 * whether it has a subquery.
 */
interface TableNames {
  other: string[]
  subqueries: boolean
}

/** Holds the syntax tree to the allow-list; answers the table names that are not the dataset's. */
function checkSyntax(tree: ExplainNode, dataset: QueryDataset): TableNames {
  const root = tree.children[0]
  if (root === undefined || kindOf(root) !== 'SelectWithUnionQuery') {
    throw analyticsError('queryType', 'Only SELECT queries are allowed')
  }
  let count = 0
  let subqueries = false
  const other: string[] = []
  const publicNames = new Set(dataset.tables.map((table) => table.name))
  const visit = (node: ExplainNode, parent: string) => {
    count++
    const kind = kindOf(node)
    if (kind === 'Set') throw analyticsError('query', 'SETTINGS clauses are not allowed')
    if (kind === 'Subquery') subqueries = true
    if (kind === 'QueryParameter') throw analyticsError('query', 'Query parameters are not supported')
    // `* APPLY(f)` calls f on each column, and the syntax tree says nothing of which function f is: f could be any.
    if (kind === 'ColumnsApplyTransformer') {
      throw analyticsError('function', 'APPLY is not allowed: call each function on its columns by name')
    }
    if (kind === 'Function') {
      const name = astNameOf(node)
      if (parent === 'TableExpression') {
        throw analyticsError('function', `Table function '${name}' is not allowed for security reasons`)
      }
      if (!ALLOWED_FUNCTIONS.has(name.toLowerCase())) {
        throw analyticsError('function', `Function '${name.toLowerCase()}' is not allowed`)
      }
    }
    if (kind === 'TableIdentifier') {
      const name = astNameOf(node)
      if (name.includes('.')) throw analyticsError('table', `Access to table '${name}' is not allowed`)
      if (!publicNames.has(name)) other.push(name)
    }
    for (const child of node.children) visit(child, kind)
  }
  visit(root, '')
  if (count > MAX_QUERY_NODES) throw analyticsError('query', 'Analytics query is too complex')
  // A SELECT's one child is its list of queries: a FORMAT or INTO OUTFILE clause is another.
  if (root.children.length !== 1) throw analyticsError('query', 'FORMAT and INTO OUTFILE clauses are not allowed')
  return { other, subqueries }
}

/**
 * Holds the analysed tree to the dataset: every table read is one of its tables (in the engine's `database`), every
 * other name a CTE (none named as one of its tables), at most MAX_PROJECTED_COLUMNS projected, and no lower bound on
 * `time` before what the tables read keep. Answers the tables read.
 */
function checkAnalysis(
  tree: ExplainNode,
  dataset: QueryDataset,
  database: string,
  names: TableNames,
  nowMs: number,
): QueryTable[] {
  const byName = new Map(dataset.tables.map((table) => [`${database}.${table.name}`, table]))
  const read = new Map<string, QueryTable>()
  const ctes = new Set<string>()
  let projected = 0
  for (const node of nodesOf(tree)) {
    const kind = kindOf(node)
    if (kind === 'TABLE_FUNCTION') {
      throw analyticsError(
        'function',
        `Table function '${fieldOf(node, 'table_function_name')}' is not allowed for security reasons`,
      )
    }
    // `TABLE EXPRESSION` heads each side of a comma join or an ARRAY JOIN's source: the tables are below it.
    if (kind === 'TABLE' && node.text !== 'TABLE EXPRESSION') {
      const name = fieldOf(node, 'table_name') ?? ''
      // What a SELECT without FROM reads: one row of nothing.
      if (name === 'system.one') continue
      const table = byName.get(name)
      if (table === undefined)
        throw analyticsError('table', `Access to table '${unqualified(name, database)}' is not allowed`)
      read.set(table.name, table)
    }
    if (kind === 'QUERY') {
      const cte = fieldOf(node, 'cte_name')
      if (cte !== undefined) {
        if (dataset.tables.some((table) => table.name.toLowerCase() === cte.toLowerCase())) {
          throw analyticsError('table', `CTE name '${cte}' conflicts with a public table name`)
        }
        ctes.add(cte)
      }
      projected += node.children.find((child) => child.text === 'PROJECTION COLUMNS')?.children.length ?? 0
    }
  }
  const refused = names.other.find((name) => !ctes.has(name))
  if (refused !== undefined) throw analyticsError('table', `Access to table '${refused}' is not allowed`)
  if (projected > MAX_PROJECTED_COLUMNS) throw analyticsError('query', 'Analytics query projects too many columns')
  const tables = [...read.values()]
  const keptDays = Math.min(...tables.map((table) => table.keptDays))
  if (Number.isFinite(keptDays)) checkRetention(tree, keptDays, nowMs)
  return tables
}

/** A table's name as the analyser gives it, without the engine's database (a table of another stays qualified). */
const unqualified = (name: string, database: string) =>
  name.startsWith(`${database}.`) ? name.slice(database.length + 1) : name

/** A comparison with `time` on the left, and how it reads with `time` on the right. */
const LOWER_BOUNDS: Record<string, 'lower' | 'upper' | 'equal'> = {
  greaterOrEquals: 'lower',
  greater: 'lower',
  equals: 'equal',
  lessOrEquals: 'upper',
  less: 'upper',
}

/**
 * Refuses a WHERE whose lower bound on `time` (`time >= X`, `time > X`, `time = X`, `X <= time`, BETWEEN's first
 * bound) is before the oldest day the tables read keep: the engine has evaluated X (a constant), so any expression of
 * allowed functions counts as what it is. A bound it could not evaluate is left alone: rows past retention are never
 * seen anyway (run-query.ts).
 */
function checkRetention(tree: ExplainNode, keptDays: number, nowMs: number): void {
  const earliest = nowMs - keptDays * DAY_MS
  for (const node of nodesOf(tree)) {
    if (node.text !== 'WHERE') continue
    for (const condition of nodesOf(node)) {
      if (kindOf(condition) !== 'FUNCTION') continue
      const bound = LOWER_BOUNDS[fieldOf(condition, 'function_name') ?? '']
      if (bound === undefined) continue
      const args = condition.children.find((child) => child.text === 'ARGUMENTS')?.children[0]?.children ?? []
      if (args.length !== 2) continue
      const [left, right] = args as [ExplainNode, ExplainNode]
      const timeLeft = isTimeColumn(left)
      if (!timeLeft && !isTimeColumn(right)) continue
      const lower = bound === 'equal' || (bound === 'lower') === timeLeft
      if (!lower) continue
      const at = instantOf(timeLeft ? right : left)
      if (at !== undefined && at < earliest) {
        throw analyticsError(
          'retention',
          `Cannot query data older than ${keptDays} days. Your query attempts to access data from ${dayOf(at)}, but only data from ${dayOf(earliest)} onwards is available.`,
        )
      }
    }
  }
}

/** The earliest instant a JavaScript Date holds, Unix ms. */
const EARLIEST_DATE_MS = -8.64e15

/** The UTC day of an instant, YYYY-MM-DD: one before any a Date holds (`time >= -9223372036854775808`) as the first. */
const dayOf = (ms: number) => new Date(Math.max(ms, EARLIEST_DATE_MS)).toISOString().split('T')[0]!

const isTimeColumn = (node: ExplainNode) => kindOf(node) === 'COLUMN' && fieldOf(node, 'column_name') === 'time'

/**
 * The instant a constant stands for, Unix ms: a DateTime's seconds, a Date's days, a text date in UTC, an integer as
 * Unix ms (how the raw tables keep `time`). Undefined for anything else.
 */
function instantOf(node: ExplainNode): number | undefined {
  if (kindOf(node) !== 'CONSTANT') return undefined
  const value = fieldOf(node, 'constant_value') ?? ''
  const type = fieldOf(node, 'constant_value_type') ?? ''
  const quoted = /^'(.*)'$/s.exec(value)?.[1]
  if (quoted !== undefined) {
    const ms = Date.parse(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}/.test(quoted) ? `${quoted.replace(' ', 'T')}Z` : quoted)
    return Number.isNaN(ms) ? undefined : ms
  }
  const number = Number(/^[A-Za-z0-9]+_(-?[\d.]+)$/.exec(value)?.[1])
  if (!Number.isFinite(number)) return undefined
  if (/^(Nullable\()?DateTime(\(|\)|$)/.test(type)) return number * 1000
  if (/^(Nullable\()?Date(32)?(\)|$)/.test(type)) return number * DAY_MS
  if (/Int\d+$|Int\d+\)$/.test(type)) return number
  return undefined
}
