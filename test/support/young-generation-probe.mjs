// Preloaded (node --import) into a keygate server by test/e2e/server-relaunch.test.ts. Half a second after start-up
// it builds objects of which a third stay alive for a while — what makes V8 grow its young generation to whatever
// most it allows — and then prints the young generation's size (V8's new space, both semi-spaces) on stderr.
import { getHeapSpaceStatistics } from 'node:v8'
import { setTimeout } from 'node:timers'

setTimeout(() => {
  const kept = []
  for (let i = 0; i < 3_000_000; i++) {
    const made = { index: i, text: `made ${i}` }
    if (i % 3 === 0) kept.push(made)
    if (kept.length > 200_000) kept.length = 0
  }
  const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')
  process.stderr.write(`young generation: ${young.space_size} bytes\n`)
}, 500).unref()
