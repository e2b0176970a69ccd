import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { readableLogLines } from '../../cli/dev-log-lines.js'

/**
 * Writes pino records (JSON lines) through the dev formatter and answers what a terminal would show: `starting` of
 * them while the server starts, the rest once its banner is out.
 */
async function shown(records: (object | string)[], starting: (object | string)[] = []): Promise<string[]> {
  const out = new PassThrough()
  let text = ''
  out.on('data', (chunk) => (text += String(chunk)))
  const lines = readableLogLines(out)
  const write = (record: object | string) =>
    lines.write(`${typeof record === 'string' ? record : JSON.stringify(record)}\n`)
  for (const record of starting) write(record)
  lines.startedUp()
  for (const record of records) write(record)
  await new Promise((resolve) => lines.end(resolve))
  return text.split('\n').filter(Boolean)
}

const at = Date.UTC(2026, 10, 22, 12, 0, 1)
const time = new Date(at).toTimeString().slice(0, 8)

describe("keygate dev's log lines", () => {
  it('one line per request: method, logged URL, status, time', async () => {
    const lines = await shown([
      {
        level: 30,
        time: at,
        requestId: 'r1',
        msg: 'incoming request',
        req: { method: 'POST', url: '/v1/apis.createApi' },
      },
      { level: 30, time: at, requestId: 'r1', msg: 'request completed', res: { statusCode: 200 }, responseTime: 1.94 },
    ])
    expect(lines).toEqual([`${time} POST /v1/apis.createApi 200 (1.9 ms)`])
  })

  it('other events with their level and fields; an error by its message; text that is not JSON as it is', async () => {
    const lines = await shown([
      { level: 40, time: at, pid: 1, hostname: 'h', name: 'dev', msg: 'shutting down', signal: 'SIGTERM' },
      { level: 50, time: at, msg: 'request failed', err: { message: 'boom', stack: 'Error: boom\n  at x' } },
      'plain text',
    ])
    expect(lines).toEqual([
      `${time} WARN shutting down signal="SIGTERM"`,
      `${time} ERROR request failed err=boom`,
      'plain text',
    ])
  })

  it('while starting, prints warnings and errors only: the banner says the rest', async () => {
    const lines = await shown(
      [{ level: 30, time: at, msg: 'after the banner' }],
      [
        { level: 30, time: at, msg: 'Server listening at http://127.0.0.1:7070' },
        { level: 20, time: at, msg: 'debugging' },
        { level: 40, time: at, msg: 'a real warning' },
      ],
    )
    expect(lines).toEqual([`${time} WARN a real warning`, `${time} INFO after the banner`])
  })

  it('forgets requests that never complete beyond a few hundred (memory stays bounded)', async () => {
    const incoming = Array.from({ length: 600 }, (_, i) => ({
      level: 30,
      time: at,
      requestId: `r${i}`,
      msg: 'incoming request',
      req: { method: 'GET', url: `/v1/keys.getKey?keyId=key_${i}` },
    }))
    const completed = (i: number) => ({
      level: 30,
      time: at,
      requestId: `r${i}`,
      msg: 'request completed',
      res: { statusCode: 200 },
    })
    const lines = await shown([...incoming, completed(0), completed(599)])
    expect(lines).toEqual([`${time} request 200`, `${time} GET /v1/keys.getKey?keyId=key_599 200`])
  })
})
