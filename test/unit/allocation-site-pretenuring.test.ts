import { describe, expect, it } from 'vitest'
import { pretenuringAskedFor } from '../../cli/allocation-site-pretenuring.js'

describe("a server's allocation-site pretenuring", () => {
  it('is turned off unless node was started with it asked for, in either spelling', () => {
    expect(pretenuringAskedFor([])).toBe(false)
    expect(pretenuringAskedFor(['--cpu-prof', '--max-semi-space-size=16'])).toBe(false)
    expect(pretenuringAskedFor(['--no-allocation-site-pretenuring'])).toBe(false)
    expect(pretenuringAskedFor(['--trace-pretenuring-statistics'])).toBe(false)
    expect(pretenuringAskedFor(['--cpu-prof', '--allocation-site-pretenuring'])).toBe(true)
    expect(pretenuringAskedFor(['--allocation_site_pretenuring'])).toBe(true)
  })
})
