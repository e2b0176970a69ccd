/** A value the console will not put into SQL: it holds a control character (a line break, a NUL) or is not text. */
export class SqlLiteralError extends Error {
  constructor() {
    super('a value holding a control character (a line break, a tab) is not put into a usage query')
  }
}

/** Control characters (C0, DEL, C1) and lone UTF-16 surrogates: no tag or id holds one, and ClickHouse's escapes do. */
const REFUSED = /[\p{Cc}\p{Cs}]/u

/**
 * A ClickHouse string literal that reads back as `text` exactly. The analytics route takes SQL and no query
 * parameters, so every value the console puts into a query (a tag the admin types, an id from the address bar) goes
 * through this, and only this. Inside single quotes ClickHouse reads backslash escapes: the backslash is escaped first,
 * then the quote; anything else (unicode included) stands for itself. A control character is refused rather than
 * written: none belongs in a tag or an id, and a NUL or line break is where SQL parsers disagree.
 */
export function sqlString(text: string): string {
  if (REFUSED.test(text)) throw new SqlLiteralError()
  return `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`
}
