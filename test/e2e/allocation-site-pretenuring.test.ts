import { fileURLToPath } from 'node:url'
import { describe, it, type ExpectStatic } from 'vitest'
import { runKeygate, startKeygate } from '../support/processes.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

const PROBE = fileURLToPath(new URL('../support/pretenuring-probe.mjs', import.meta.url))
const SPY = fileURLToPath(new URL('../support/v8-flags-spy.mjs', import.meta.url))
const TURNED_OFF = 'v8 flags set: --no-allocation-site-pretenuring'

/** A line V8 prints (`--trace-pretenuring-statistics`) each time a scavenge processes pretenuring feedback. */
const FEEDBACK = /\] pretenuring: /g
/** What the probe prints once it has built its literals. */
const PROBE_DONE = 'pretenuring probe: literals built'

/**
 * The lines of pretenuring feedback a `keygate dev` started with `nodeFlags` printed in its life: it starts (whose
 * allocations alone give V8 with pretenuring on feedback to process), answers a couple of thousand verifications, and
 * the probe preloaded into it (test/support/pretenuring-probe.mjs) builds literals that survive scavenges — so that
 * there is feedback to process whatever start-up comes to allocate. Counted once the process has exited, when all
 * that V8 printed has been read.
 */
async function feedbackUnderLoad(nodeFlags: string[], expect: ExpectStatic): Promise<number> {
  const server = await startKeygate(['dev'], { LOG_LEVEL: 'warn' }, [
    '--trace-pretenuring-statistics',
    '--import',
    PROBE,
    ...nodeFlags,
  ])
  try {
    let sent = 0
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (sent < 2000) {
          const answer = await fetch(`${server.url}/v1/keys.verifyKey`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ key: `sk_unknown_${sent++}`, apiId: 'api_none' }),
          })
          expect(answer.status).toBe(200)
          await answer.arrayBuffer()
        }
      }),
    )
    // The probe was loaded before the server was ready, and builds its literals a second after start-up.
    await waitFor(() => server.output().includes(PROBE_DONE), 'the probe to build its literals', 10_000, 20)
  } finally {
    expect(await server.stop()).toBe(0)
  }
  return server.output().match(FEEDBACK)?.length ?? 0
}

/**
 * cli/allocation-site-pretenuring.ts: a server turns V8's allocation-site pretenuring off at start-up (V8 then
 * processes no pretenuring feedback, so none is traced), unless node was started with it asked for.
 */
// The tests of each group side by side (each its own server): their time is the servers' start-up and the probe's.
describe("the servers' allocation-site pretenuring", () => {
  it.concurrent('is off in a running server: V8 processes no pretenuring feedback under load', async ({ expect }) => {
    expect(await feedbackUnderLoad([], expect)).toBe(0)
  })

  it.concurrent(
    'stays on when node was started with --allocation-site-pretenuring (and then V8 does process feedback)',
    async ({ expect }) => {
      expect(await feedbackUnderLoad(['--allocation-site-pretenuring'], expect)).toBeGreaterThan(0)
    },
  )
})

/** cli/keygate.ts turns it off for every server, before their modules load, and for no one-shot command. */
describe('which commands turn pretenuring off', () => {
  const redis = useRedisServer()

  it.concurrent.for(['verifier', 'control-plane'])('keygate %s does, before it serves', async (command, { expect }) => {
    const server = await startKeygate([command], { REDIS_URL: redis.url, NODE_OPTIONS: `--import=${SPY}` })
    try {
      expect(server.output()).toContain('v8 flags spy: loaded')
      expect(server.output()).toContain(TURNED_OFF)
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })

  it.concurrent('a one-shot command (keygate root-key create) does not', async ({ expect }) => {
    const created = await runKeygate(['root-key', 'create', '--permissions', '*', '--redis', redis.url], {
      NODE_OPTIONS: `--import=${SPY}`,
    })
    expect(created.code, created.stderr).toBe(0)
    expect(created.stderr).toContain('v8 flags spy: loaded')
    expect(created.stderr).not.toContain('v8 flags set')
  })
})
