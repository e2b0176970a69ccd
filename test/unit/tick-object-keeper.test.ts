import { describe, expect, it } from 'vitest'
import { heldTickObject, holdTickObject } from '../../cli/tick-object-keeper.js'

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

describe('the tick object keeper', () => {
  it('holds one of the tick objects process.nextTick builds, and takes a newer one every second', async () => {
    expect(heldTickObject()).toBeUndefined()
    holdTickObject()
    await nextTurn()
    const first = heldTickObject() as { callback?: unknown } | undefined
    // A tick object: what nextTick queued, with the callback it runs (not a timer or a promise).
    expect(typeof first?.callback).toBe('function')
    expect(first?.constructor).toBe(Object)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    await nextTurn()
    const later = heldTickObject()
    expect(typeof (later as { callback?: unknown }).callback).toBe('function')
    expect(later).not.toBe(first)
  })
})
