import { describe, expect, it } from 'vitest'
import { benchNodeWarning, JUDGED_NODE_MAJOR } from '../../bench/lib/bench-node.js'

describe('the bench on an older Node', () => {
  it('warns below the judged major and names it', () => {
    expect(JUDGED_NODE_MAJOR).toBe(24)
    for (const version of ['20.20.2', '22.12.0', '23.9.0']) {
      const warning = benchNodeWarning(version)
      expect(warning).toContain(`running on Node ${version}`)
      expect(warning).toContain('judge on Node 24')
    }
  })

  it('says nothing on the judged major and later', () => {
    for (const version of ['24.0.0', '24.21.0', '26.0.0']) expect(benchNodeWarning(version)).toBeUndefined()
  })
})
