/** One insert's text (JSONEachRow) and the token the engine drops a repeat of it by. */
export interface InsertPart {
  text: string
  token: string
}

/**
 * The rows of the batch `batchId` as JSONEachRow texts of at most `maxChars` characters each (a row longer than that
 * alone), in order: one insert's text must stay within V8's longest string (about 512 Mi characters), which rows with
 * long tags pass well before any bound on rows does. The same rows always make the same parts, each under a token of
 * its own (the first under `batchId` itself), so that a batch sent again, whole or after some parts went in, is
 * dropped part by part.
 */
export function* insertParts(rows: readonly object[], batchId: string, maxChars: number): Generator<InsertPart> {
  let lines: string[] = []
  let chars = 0
  let part = 0
  const made = (): InsertPart => {
    const token = part === 0 ? batchId : `${batchId}:${part}`
    part++
    return { text: lines.join('\n'), token }
  }
  for (const row of rows) {
    const line = JSON.stringify(row)
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
