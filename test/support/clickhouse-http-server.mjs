// ClickHouse's HTTP interface, answered by chDB (the embedded engine): the ClickHouse server Keygate's server engine
// is tested against, as no ClickHouse server installs here. A process of its own, as chDB allows one data directory
// per process: `node clickhouse-http-server.mjs <data directory> <port>`, with CLICKHOUSE_TEST_USER and
// CLICKHOUSE_TEST_PASSWORD the one user it lets in; it prints `{"port":N}` once it listens.
//
// What it answers as a server does, for the paths the tests take: `/ping`; a query in the body of a POST, or in the
// `query` parameter (of a POST, followed by the body: an INSERT's data; of a GET, alone and read-only); `param_<name>`
// bound by the engine, never spliced; `database`, `default_format` and `query_id`; every other parameter a setting,
// applied to the query as a server applies it (an unknown one refused); Basic auth, X-ClickHouse-User/-Key or
// `user`/`password` (one way only), checked; several statements refused; errors as a server writes them (the status,
// X-ClickHouse-Exception-Code, and `Code: N. DB::Exception: … (NAME) (version …)`); on success X-ClickHouse-Summary,
// -Query-Id, -Format, -Timezone. It runs one query at a time, and refuses what it does not do (sessions, compression,
// the `readonly` setting) rather than pretend to. Its user's profile sets the opposite of what Keygate needs (PROFILE),
// and an asynchronous insert not waited for is written after its answer, as a server writes it. It always answers as
// with `wait_end_of_query=1` (chDB gives a result whole): what a request sends for that is recorded instead. Two paths
// of its own tell a test what no server tells: /keygate-test/connections, how many connections were open at once, and
// /keygate-test/requests, the parameters of the requests it answered (no parameter's value, no password).
import { Buffer } from 'node:buffer'
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { setTimeout } from 'node:timers'
import { URL } from 'node:url'
import { Session } from 'chdb'

const [directory, portArgument] = process.argv.slice(2)
if (directory === undefined) {
  console.error('usage: node clickhouse-http-server.mjs <data directory> [port]')
  process.exit(2)
}
const USER = process.env.CLICKHOUSE_TEST_USER ?? 'default'
const PASSWORD = process.env.CLICKHOUSE_TEST_PASSWORD ?? ''

/** When an asynchronous insert not waited for is written, ms after its answer (a server's default busy timeout). */
const ASYNC_INSERT_FLUSH_MS = 200

/**
 * The settings profile of its one user, as a server's users.xml gives one: every request starts from it, and what the
 * request sets applies to that request alone. Each setting is the opposite of what Keygate needs (a profile or another
 * version may hold any of them: defaults are no contract), so that a test passes only if the engine sets it on its
 * requests itself: inserts answered before they are written, duplicates dropped by the table but not by the rollups
 * its views feed, 64-bit integers and non-finite numbers as strings.
 */
const PROFILE = [
  ['async_insert', '1'],
  ['wait_for_async_insert', '0'],
  ['deduplicate_blocks_in_dependent_materialized_views', '0'],
  ['output_format_json_quote_64bit_integers', '1'],
  ['output_format_json_quote_denormals', '1'],
]

/** The HTTP parameters a server reads itself; every other one (but `param_*`) is a setting. */
const RESERVED = new Set([
  'query',
  'compress',
  'decompress',
  'user',
  'password',
  'quota_key',
  'query_id',
  'stacktrace',
  'role',
  'buffer_size',
  'wait_end_of_query',
  'session_id',
  'session_timeout',
  'session_check',
  'client_protocol_version',
  'close_session',
  'database',
  'default_format',
])

/** An exception as a server raises it: its code, name and message. */
class ServerException extends Error {
  constructor(code, name, message) {
    super(message)
    this.code = code
    this.name = name
  }
}

/** What this test server does not do: said, never pretended. */
const unsupported = (what) => new ServerException(48, 'NOT_IMPLEMENTED', `the test server does not support ${what}`)

const session = new Session(directory)
const version = JSON.parse((await session.queryAsync('SELECT version() AS v', { format: 'JSONEachRow' })).text()).v

/** The call running, or the last: chDB runs one at a time per session, and each request sets its own settings. */
let queue = Promise.resolve()
const serialised = (work) => {
  const run = queue.then(work)
  queue = run.catch(() => undefined)
  return run
}

/** A ClickHouse string literal. */
const literal = (text) => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`
/** A ClickHouse name in backquotes. */
const quoted = (name) => `\`${name.replaceAll('\\', '\\\\').replaceAll('`', '\\`')}\``

const profile = new Map(PROFILE)
for (const [name, value] of profile) await session.queryAsync(`SET ${quoted(name)} = ${literal(value)}`)

/** A `param_` value as the server reads it (escaped, as TSV): the text it stands for. */
function unescaped(value) {
  const escapes = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', 0: '\0', a: '\x07', v: '\v' }
  return value.replace(/\\(x[0-9a-fA-F]{2}|.)/gs, (_, c) =>
    c.length === 3 ? String.fromCharCode(parseInt(c.slice(1), 16)) : (escapes[c] ?? c),
  )
}

/** Who the request says it is, as a server reads it, or the exception it answers. */
function credentialsOf(request, search) {
  const basic = request.headers.authorization
  const headerUser = request.headers['x-clickhouse-user']
  const paramUser = search.get('user')
  const ways = [basic !== undefined, headerUser !== undefined, paramUser !== null].filter(Boolean).length
  if (ways > 1)
    throw new ServerException(
      516,
      'AUTHENTICATION_FAILED',
      'Invalid authentication: it is not allowed to use several authentication methods simultaneously',
    )
  if (basic !== undefined) {
    const match = /^Basic (.+)$/i.exec(basic)
    if (match === null) throw new ServerException(516, 'AUTHENTICATION_FAILED', 'Invalid authentication header')
    const decoded = Buffer.from(match[1], 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    return colon < 0
      ? { user: decoded, password: '' }
      : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
  }
  if (headerUser !== undefined) return { user: headerUser, password: request.headers['x-clickhouse-key'] ?? '' }
  if (paramUser !== null) return { user: paramUser, password: search.get('password') ?? '' }
  return { user: 'default', password: '' }
}

/** The HTTP status a server answers an exception with. */
function statusOf(code) {
  if ([192, 193, 194, 516].includes(code)) return 401
  if (code === 497) return 403
  if ([60, 81, 46, 47].includes(code)) return 404
  if ([6, 26, 27, 38, 41, 62, 72, 73, 115, 456].includes(code)) return 400
  if (code === 48) return 501
  return 500
}

function answerException(response, err, queryId) {
  const code = err instanceof ServerException ? err.code : (err?.clickhouseCode ?? 1001)
  const said =
    err instanceof ServerException
      ? `Code: ${code}. DB::Exception: ${err.message}. (${err.name})`
      : String(err?.message ?? err)
  // chDB's message is a server's: `Code: N. DB::Exception: … (NAME)`.
  const text = said.startsWith('Code: ') ? said : `Code: ${code}. DB::Exception: ${said}. (STD_EXCEPTION)`
  response.writeHead(statusOf(code), {
    'Content-Type': 'text/plain; charset=UTF-8',
    'X-ClickHouse-Server-Display-Name': 'keygate-test-clickhouse',
    'X-ClickHouse-Exception-Code': String(code),
    ...(queryId === undefined ? {} : { 'X-ClickHouse-Query-Id': queryId }),
  })
  response.end(`${text} (version ${version})\n`)
}

/** The statements a query holds, as the server's parser sees them: several are refused, as over HTTP. */
async function checkOneStatement(text) {
  if (/^\s*INSERT\b/i.test(text)) return // its data follows FORMAT, whatever it holds
  if (text.trim() === '') throw new ServerException(62, 'SYNTAX_ERROR', 'Empty query')
  try {
    await session.queryBindAsync('SELECT formatQuerySingleLine({q:String})', { q: text }, { format: 'JSONEachRow' })
  } catch (err) {
    const said = /Syntax error \(Multi-statements are not allowed\): (.*?)\.?\s*: In scope /s.exec(String(err?.message))
    if (said !== null)
      throw new ServerException(62, 'SYNTAX_ERROR', `Syntax error (Multi-statements are not allowed): ${said[1]}`)
    // Any other mistake is the query's own, said by running it.
  }
}

/** Whether a GET may run the query: over GET a server is read-only. */
const isRead = (text) => /^\s*(\(\s*)*(SELECT|WITH|SHOW|DESCRIBE|DESC|EXISTS|EXPLAIN)\b/i.test(text)

async function run(request, search, body) {
  const text =
    request.method === 'GET'
      ? (search.get('query') ?? '')
      : [search.get('query'), body].filter((part) => part).join('\n')
  const params = {}
  const settings = []
  for (const [name, value] of search) {
    if (name.startsWith('param_')) params[name.slice('param_'.length)] = unescaped(value)
    else if (!RESERVED.has(name)) settings.push([name, value])
  }
  if (search.has('session_id')) throw unsupported('sessions')
  if (search.get('compress') === '1' || search.get('decompress') === '1') throw unsupported('compression')
  if (settings.some(([name]) => name === 'readonly' || name === 'enable_http_compression'))
    throw unsupported('the readonly and enable_http_compression settings over HTTP')
  const database = search.get('database') ?? 'default'
  // The format of an answer whose query names none: chDB, as a server, writes a query's own FORMAT clause's instead
  // (after EXPLAIN's statement, a FORMAT clause is the explained query's: the default is the answer's).
  const format = search.get('default_format') ?? 'TabSeparated'
  const execute = () =>
    serialised(async () => {
      await checkOneStatement(text)
      if (request.method === 'GET' && !isRead(text))
        throw new ServerException(
          164,
          'READONLY',
          'Cannot execute query in readonly mode. For queries over HTTP, method GET implies readonly. You should use method POST for modifying queries',
        )
      await session.queryAsync(`USE ${quoted(database)}`)
      const set = []
      try {
        for (const [name, value] of settings) {
          await session.queryAsync(`SET ${quoted(name)} = ${literal(value)}`)
          set.push(name)
        }
        const started = process.hrtime.bigint()
        const result =
          Object.keys(params).length === 0
            ? await session.queryAsync(text, { format })
            : await session.queryBindAsync(text, params, { format })
        return { result, format, elapsed: process.hrtime.bigint() - started }
      } finally {
        for (const name of set) {
          const value = profile.has(name) ? literal(profile.get(name)) : 'DEFAULT'
          await session.queryAsync(`SET ${quoted(name)} = ${value}`).catch(() => undefined)
        }
        await session.queryAsync('USE default').catch(() => undefined)
      }
    })
  // An asynchronous insert not waited for (chDB's own queries insert synchronously): a server answers it at once and
  // writes its data when its queue is next flushed, or fails then with no one told.
  const effective = new Map([...profile, ...settings])
  if (
    /^\s*INSERT\b/i.test(text) &&
    effective.get('async_insert') === '1' &&
    effective.get('wait_for_async_insert') === '0'
  ) {
    setTimeout(() => execute().catch(() => undefined), ASYNC_INSERT_FLUSH_MS)
    return { result: { bytes: () => new Uint8Array(0) }, format, elapsed: 0n }
  }
  return execute()
}

// A request line of up to 1 MiB, as a server's `http_max_uri_size`: parameters are sent in the URL.
const server = createServer({ maxHeaderSize: 1024 * 1024 }, async (request, response) => {
  const url = new URL(request.url ?? '/', 'http://localhost')
  const chunks = []
  for await (const chunk of request) chunks.push(chunk)
  const body = Buffer.concat(chunks).toString('utf8')
  const queryId = url.searchParams.get('query_id') ?? randomUUID()
  try {
    if (
      url.pathname === '/ping' ||
      (url.pathname === '/' && request.method === 'GET' && !url.searchParams.has('query'))
    ) {
      response.writeHead(200, { 'Content-Type': 'text/html; charset=UTF-8' })
      response.end('Ok.\n')
      return
    }
    // The test's own view of the server (no server has it): the requests it answered, by the settings they sent.
    if (url.pathname === '/keygate-test/requests') {
      response.writeHead(200, { 'Content-Type': 'application/json' })
      response.end(JSON.stringify(requests))
      return
    }
    // The most connections it had open at once.
    if (url.pathname === '/keygate-test/connections') {
      response.writeHead(200, { 'Content-Type': 'application/json' })
      response.end(JSON.stringify({ open: connections.open, most: connections.most }))
      return
    }
    if (url.pathname !== '/') throw new ServerException(1001, 'STD_EXCEPTION', `There is no handle ${url.pathname}`)
    if (request.method !== 'GET' && request.method !== 'POST') throw unsupported(`method ${request.method}`)
    const encoding = request.headers['content-encoding']
    if (encoding !== undefined && encoding !== 'identity') throw unsupported(`Content-Encoding ${encoding}`)
    requests.push(recordOf(url.searchParams, body))
    if (requests.length > RECORDED_REQUESTS) requests.shift()
    const { user, password } = credentialsOf(request, url.searchParams)
    if (user !== USER || password !== PASSWORD)
      throw new ServerException(
        516,
        'AUTHENTICATION_FAILED',
        `${user}: Authentication failed: password is incorrect, or there is no user with such name`,
      )
    const { result, format, elapsed } = await run(request, url.searchParams, body)
    const answer = Buffer.from(result.bytes())
    response.writeHead(200, {
      'Content-Type': 'text/plain; charset=UTF-8',
      'X-ClickHouse-Server-Display-Name': 'keygate-test-clickhouse',
      'X-ClickHouse-Query-Id': queryId,
      'X-ClickHouse-Format': format,
      'X-ClickHouse-Timezone': 'UTC',
      'X-ClickHouse-Summary': JSON.stringify({
        read_rows: String(result.rowsRead ?? 0),
        read_bytes: String(result.bytesRead ?? 0),
        written_rows: '0',
        written_bytes: '0',
        total_rows_to_read: '0',
        result_rows: '0',
        result_bytes: String(answer.length),
        elapsed_ns: String(elapsed),
      }),
      'Keep-Alive': 'timeout=10',
      'Content-Length': answer.length,
    })
    response.end(answer)
  } catch (err) {
    answerException(response, err, queryId)
  }
})

const connections = { open: 0, most: 0 }

/** The last requests answered, at most RECORDED_REQUESTS: each statement's first word and the settings it sent. */
const RECORDED_REQUESTS = 1000
const requests = []
function recordOf(search, body) {
  const statement = (search.get('query') ?? body).trim().split(/\s/, 1)[0].toUpperCase()
  const settings = {}
  for (const [name, value] of search)
    if (!name.startsWith('param_') && !['query', 'user', 'password', 'query_id'].includes(name)) settings[name] = value
  return { statement, settings }
}
server.on('connection', (socket) => {
  connections.most = Math.max(connections.most, ++connections.open)
  socket.once('close', () => connections.open--)
})

server.listen(Number(portArgument ?? 0), '127.0.0.1', () => {
  console.log(JSON.stringify({ port: server.address().port, version }))
})

const stop = () => {
  server.close()
  server.closeAllConnections()
  queue.finally(() => {
    session.close()
    process.exit(0)
  })
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
