import { describe, expect, it } from 'vitest'
import { engineErrorOf, exceptionCodeOf, isEngineFailure } from '../../control-plane/analytics/query/engine-errors.js'

/** An error as chDB throws it: its message a server's, its code apart. */
const chdbError = (code: number, message: string) =>
  Object.assign(new Error(`Code: ${code}. DB::Exception: ${message}`), {
    name: 'ChdbQueryError',
    code: 'CHDB_QUERY_ERROR',
    clickhouseCode: code,
  })
/** An error as the server's client throws it: the message without `Code:`, the code as digits, the name apart. */
const clientError = (code: number, type: string, message: string) =>
  Object.assign(new Error(message), { code: String(code), type })

const seen = (err: unknown) => {
  const answer = engineErrorOf(err)
  return { status: answer.statusCode, problem: answer.details?.problem, message: answer.message }
}

/** One classifier for both engines' errors: the query's mistakes and limits, or the engine's failure. */
describe('engine errors', () => {
  it('reads ClickHouse’s code from either engine, and none from an error ClickHouse did not answer', () => {
    expect(exceptionCodeOf(chdbError(62, 'Syntax error'))).toBe(62)
    expect(exceptionCodeOf(clientError(60, 'UNKNOWN_TABLE', 'Unknown table'))).toBe(60)
    expect(exceptionCodeOf(new Error('Code: 159. DB::Exception: Timeout exceeded'))).toBe(159)
    expect(
      exceptionCodeOf(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' })),
    ).toBeUndefined()
    expect(exceptionCodeOf(new Error('Timeout error.'))).toBeUndefined()
  })

  it.each([
    [
      'a syntax error (chDB)',
      chdbError(62, 'Syntax error: failed at position 1. (SYNTAX_ERROR)'),
      400,
      'Invalid SQL syntax',
    ],
    [
      'a syntax error (server)',
      clientError(62, 'SYNTAX_ERROR', 'Syntax error: failed at position 1. '),
      400,
      'Invalid SQL syntax',
    ],
    [
      'an unknown identifier (server)',
      clientError(47, 'UNKNOWN_IDENTIFIER', 'Unknown expression identifier `x`. '),
      400,
      'Unknown identifier',
    ],
    ['a timeout (server)', clientError(159, 'TIMEOUT_EXCEEDED', 'Timeout exceeded: elapsed 10 s. '), 422, 'time limit'],
    [
      'too many rows (chDB)',
      chdbError(396, 'Limit for result exceeded, max rows: 1. (TOO_MANY_ROWS_OR_BYTES)'),
      422,
      'row count',
    ],
    [
      'an answer too large (server)',
      clientError(396, 'TOO_MANY_ROWS_OR_BYTES', 'Limit for result exceeded, max bytes: 4.00 MiB. '),
      422,
      'response size',
    ],
    [
      'a wrong password (server)',
      clientError(516, 'AUTHENTICATION_FAILED', 'keygate: Authentication failed. '),
      503,
      'cannot be reached',
    ],
    [
      'a missing grant (server)',
      clientError(497, 'ACCESS_DENIED', 'keygate: Not enough privileges. '),
      503,
      'cannot be reached',
    ],
    ['Keeper gone (server)', clientError(999, 'KEEPER_EXCEPTION', 'Session expired. '), 503, 'cannot be reached'],
    [
      'a table the engine lacks (server)',
      clientError(60, 'UNKNOWN_TABLE', "Unknown table expression identifier 'key_verifications_per_day_v1' in scope "),
      503,
      'cannot be reached',
    ],
    [
      "the query's own memory limit (chDB)",
      chdbError(241, 'Query memory limit exceeded: would use 1.00 GiB, maximum: 953.67 MiB. (MEMORY_LIMIT_EXCEEDED)'),
      422,
      'memory limit',
    ],
    [
      "the server's memory, spent by every query at once (server)",
      clientError(
        241,
        'MEMORY_LIMIT_EXCEEDED',
        '(total) memory limit exceeded: would use 1.80 GiB, maximum: 1.80 GiB. OvercommitTracker decision: Query was selected to stop by OvercommitTracker. ',
      ),
      503,
      'cannot be reached',
    ],
    [
      "the memory of Keygate's user, before ClickHouse 26 (server)",
      clientError(
        241,
        'MEMORY_LIMIT_EXCEEDED',
        'Memory limit (for user) exceeded: would use 4.00 GiB, maximum: 4.00 GiB. ',
      ),
      503,
      'cannot be reached',
    ],
    [
      'an unreachable server',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' }),
      503,
      'cannot be reached',
    ],
    ['no answer in time', new Error('Timeout error.'), 503, 'cannot be reached'],
    ['a closed engine', new Error('the embedded analytics engine is closed'), 503, 'cannot be reached'],
  ])('%s', (_, err, status, words) => {
    const answer = seen(err)
    expect(answer.status).toBe(status)
    expect(answer.message).toContain(words)
    expect(isEngineFailure(err)).toBe(status === 503)
    if (status === 503) expect(answer.problem).toBe('data/analytics_connection_failed')
  })
})
