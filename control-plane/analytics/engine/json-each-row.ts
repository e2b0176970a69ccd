import type { EngineRow } from './analytics-engine.js'

/** The rows of a JSONEachRow answer, as both engines answer a query: an object a line, none for an empty text. */
export function rowsOfJsonEachRow(text: string): EngineRow[] {
  return text === ''
    ? []
    : text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as EngineRow)
}
