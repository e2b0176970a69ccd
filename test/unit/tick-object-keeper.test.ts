import { execFile } from 'node:child_process'
import { createHook } from 'node:async_hooks'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { heldTickObject, holdTickObject } from '../../cli/tick-object-keeper.js'
import { waitFor } from '../support/wait-for.js'

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))
const KEEPER = fileURLToPath(new URL('../../dist/cli/tick-object-keeper.js', import.meta.url))

describe('the tick object keeper', () => {
  it('holds the very tick objects process.nextTick builds (not copies), and takes a newer one every second', async () => {
    // The tick objects nextTick builds from here on, as async_hooks is told of them.
    const built = new Set<object>()
    const hook = createHook({
      init(_id, type, _trigger, resource) {
        if (type === 'TickObject') built.add(resource)
      },
    }).enable()
    try {
      expect(heldTickObject()).toBeUndefined()
      holdTickObject()
      await nextTurn()
      const first = heldTickObject()
      expect(first !== undefined && built.has(first)).toBe(true)
      // A newer one within the second (and a little): the keeper's turn, then the tick it took.
      await waitFor(() => heldTickObject() !== first, 'a newer tick object', 1_100, 10)
      await nextTurn()
      const later = heldTickObject()
      expect(later).not.toBe(first)
      expect(later !== undefined && built.has(later)).toBe(true)
    } finally {
      hook.disable()
    }
  })

  // The built module, in a process of its own (npm test builds first).
  it('does not keep a process alive', { timeout: 15_000 }, async () => {
    const started = Date.now()
    await promisify(execFile)(
      process.execPath,
      ['--input-type=module', '-e', `import { holdTickObject } from ${JSON.stringify(KEEPER)}; holdTickObject()`],
      { timeout: 10_000 },
    )
    expect(Date.now() - started).toBeLessThan(5_000)
  })
})
