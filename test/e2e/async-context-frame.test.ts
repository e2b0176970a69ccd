import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { startKeygate } from '../support/processes.js'

/** The node flags a running process was started with, as the kernel has them (its argv after the node binary). */
function commandLineOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).slice(1)
}

const frameOnByDefault = Number(process.versions.node.split('.')[0]) >= 24

/**
 * cli/without-async-context-frame.ts: on Node 24 a server relaunches itself with --no-async-context-frame in the
 * process it was started as (the pid a supervisor holds), and serves; an operator's own frame flag is kept.
 */
describe('the servers and the async context frame', () => {
  it(`keygate dev runs ${frameOnByDefault ? 'with' : 'without'} the flag added, in the process it was started as, and serves`, async () => {
    const server = await startKeygate(['dev'])
    try {
      const flags = commandLineOf(server.child.pid!)
      expect(flags.includes('--no-async-context-frame')).toBe(frameOnByDefault)
      const answer = await fetch(`${server.url}/v1/keys.verifyKey`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"key":"sk_unknown"}',
      })
      expect(answer.status).toBe(200)
      expect(((await answer.json()) as { code: string }).code).toBe('NOT_FOUND')
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })

  it.runIf(frameOnByDefault)('keeps the frame when the operator asks for it in NODE_OPTIONS', async () => {
    const server = await startKeygate(['dev'], { NODE_OPTIONS: '--async-context-frame' })
    try {
      expect(commandLineOf(server.child.pid!)).not.toContain('--no-async-context-frame')
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })
})
