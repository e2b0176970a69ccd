import { createServer, type Server } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../support/free-port.js'
import { runKeygate } from '../support/processes.js'

/**
 * A port another process holds stops the start at once, naming the option to change, before anything is
 * announced (a second verifier used to log "reverse proxy listening" and then die with EADDRINUSE).
 */
describe('a taken port', () => {
  let holder: Server
  let taken: number
  beforeAll(async () => {
    holder = createServer()
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
    taken = (holder.address() as { port: number }).port
  })
  afterAll(async () => {
    await new Promise((resolve) => holder.close(resolve))
  })

  const env = { HOST: '127.0.0.1', LOG_LEVEL: 'info', REDIS_URL: 'redis://127.0.0.1:1' }
  const announced = /listening|started|Keygate dev server/

  it('of the verifier, with the reverse proxy on a free one', async () => {
    const proxy = ['--upstream', 'http://127.0.0.1:9', '--api-id', 'api_x', '--proxy-port']
    const args = ['verifier', '--port', String(taken), ...proxy]
    const result = await runKeygate([...args, String(await freePort())], env)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`keygate: port ${taken} on 127.0.0.1 is already in use`)
    expect(result.stderr).toContain('set PORT (--port) to another port')
    expect(result.stdout + result.stderr).not.toMatch(announced)
  })

  it("of the verifier's reverse proxy", async () => {
    const args = [
      'verifier',
      '--port',
      String(await freePort()),
      '--upstream',
      'http://127.0.0.1:9',
      '--api-id',
      'api_x',
    ]
    const result = await runKeygate([...args, '--proxy-port', String(taken)], env)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`port ${taken} on 127.0.0.1 is already in use`)
    expect(result.stderr).toContain('set PROXY_PORT (--proxy-port) to another port')
    expect(result.stdout + result.stderr).not.toMatch(announced)
  })

  it('of the control plane and of keygate dev', async () => {
    for (const command of ['control-plane', 'dev']) {
      const result = await runKeygate([command, '--port', String(taken)], env)
      expect(result.code, command).toBe(1)
      expect(result.stderr, command).toContain('set PORT (--port) to another port')
      expect(result.stdout + result.stderr, command).not.toMatch(announced)
    }
  })
})
