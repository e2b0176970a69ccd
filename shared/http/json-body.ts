import secureJson from 'secure-json-parse'
import { invalid } from '../errors/errors.js'
import { jsonSyntaxProblem } from './json-syntax.js'
import { requireWellFormedStrings } from './well-formed-strings.js'

const PARSE_OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const

/**
 * A request body as JSON, for Fastify's parser and the fast route alike (so both answer the same): what
 * secure-json-parse accepts, prototype-poisoning keys refused, and strings that are not well-formed Unicode refused
 * (well-formed-strings.ts). A 400 says where the text stops being JSON, or which field holds the broken string.
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw invalid('body', 'is empty; send a JSON object')
  let body: unknown
  try {
    body = secureJson.parse(text, undefined, PARSE_OPTIONS)
  } catch {
    // Only failures get here: finding the position costs a second pass over the text.
    const problem = jsonSyntaxProblem(text)
    throw invalid(
      'body',
      problem === undefined
        ? 'has a __proto__ or constructor.prototype key, which is refused'
        : `is not valid JSON: ${problem}`,
    )
  }
  requireWellFormedStrings(text, body)
  return body
}
