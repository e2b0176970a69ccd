/** One insert's text (JSONCompactEachRow, a JSON array per row), and the token the engine drops a repeat of it by. */
export interface InsertPart {
  text: string
  token: string
}

/**
 * Rows as an insert sends them, JSONCompactEachRow: the columns, and each row as a JSON array of its values in their
 * order. Compact rows are half the text of JSONEachRow's and cheaper to write and for the engine to read: the ingest's
 * largest costs. The ingest writes its verification rows so from its batches (analytics-batch.ts).
 */
export interface CompactRows {
  columns: readonly string[]
  lines: readonly string[]
}

/** What an insert takes: rows as objects (their fields the columns, alike in every row), or compact already. */
export type InsertRows = readonly object[] | CompactRows

/** `rows` as compact rows: objects' columns are the first row's fields, which every row of an insert shares. */
export function compactRows(rows: InsertRows): CompactRows {
  if (!Array.isArray(rows)) return rows as CompactRows
  const objects = rows as readonly Record<string, unknown>[]
  const columns = objects.length === 0 ? [] : Object.keys(objects[0]!)
  const values: unknown[] = new Array<unknown>(columns.length)
  const lines = objects.map((row) => {
    for (let i = 0; i < columns.length; i++) values[i] = row[columns[i]!]
    return JSON.stringify(values)
  })
  return { columns, lines }
}

/**
 * The `lines` of the batch `batchId` as insert texts of at most `maxChars` characters each (a line longer than that
 * alone), in order: one insert's text must stay within V8's longest string (about 512 Mi characters), which rows with
 * long tags pass well before any bound on rows does. The same lines always make the same parts, each under a token of
 * its own (the first under `batchId` itself), so that a batch sent again, whole or after some parts went in, is
 * dropped part by part.
 */
export function* insertParts(lines: readonly string[], batchId: string, maxChars: number): Generator<InsertPart> {
  let first = 0
  let chars = 0
  let part = 0
  const made = (end: number): InsertPart => {
    const token = part === 0 ? batchId : `${batchId}:${part}`
    part++
    return { text: lines.slice(first, end).join('\n'), token }
  }
  for (let at = 0; at < lines.length; at++) {
    const line = lines[at]!
    if (at > first && chars + 1 + line.length > maxChars) {
      yield made(at)
      first = at
      chars = 0
    }
    chars += (at > first ? 1 : 0) + line.length
  }
  if (lines.length > first) yield made(lines.length)
}

/**
 * What every insert sets, on both engines: written, with its token, before the call returns, so that the buffer it
 * came from may be acknowledged then (chDB inserts asynchronously by default); the rollups the views feed drop a
 * retried part too (each keeps its own deduplication window); and no merging of the inserted block's rows by sort key
 * on the way in (optimize_on_insert): the views' GROUP BY already made each block's rollup rows one per key, the raw
 * table's rows are all kept anyway, and that pass was a tenth of an insert's cost.
 */
export const INSERT_SETTINGS = {
  async_insert: 0,
  deduplicate_blocks_in_dependent_materialized_views: 1,
  optimize_on_insert: 0,
} as const
