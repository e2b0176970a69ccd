/** One insert's text (JSONCompactEachRow, a JSON array per row), and the token the engine drops a repeat of it by. */
export interface InsertPart {
  text: string
  token: string
}

/**
 * The rows of an insert as JSONCompactEachRow: its columns (the first row's fields, which every row of an insert
 * shares: they are made by one function) and each row's values in that order. Compact rows are half the text of
 * JSONEachRow's and cheaper to write and for the engine to read: the ingest's largest costs.
 */
export function insertColumns(rows: readonly object[]): string[] {
  return rows.length === 0 ? [] : Object.keys(rows[0]!)
}

/**
 * The rows of the batch `batchId` as JSONCompactEachRow texts of at most `maxChars` characters each (a row longer than
 * that alone), in order, each row's values in the order of `columns`: one insert's text must stay within V8's longest
 * string (about 512 Mi characters), which rows with long tags pass well before any bound on rows does. The same rows
 * always make the same parts, each under a token of its own (the first under `batchId` itself), so that a batch sent
 * again, whole or after some parts went in, is dropped part by part.
 */
export function* insertParts(
  rows: readonly object[],
  columns: readonly string[],
  batchId: string,
  maxChars: number,
): Generator<InsertPart> {
  let lines: string[] = []
  let chars = 0
  let part = 0
  const made = (): InsertPart => {
    const token = part === 0 ? batchId : `${batchId}:${part}`
    part++
    return { text: lines.join('\n'), token }
  }
  const values: unknown[] = new Array<unknown>(columns.length)
  for (const row of rows) {
    const fields = row as Record<string, unknown>
    for (let i = 0; i < columns.length; i++) values[i] = fields[columns[i]!]
    const line = JSON.stringify(values)
    if (lines.length > 0 && chars + 1 + line.length > maxChars) {
      yield made()
      lines = []
      chars = 0
    }
    chars += (lines.length > 0 ? 1 : 0) + line.length
    lines.push(line)
  }
  if (lines.length > 0) yield made()
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
