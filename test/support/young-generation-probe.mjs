// Preloaded (node --import) into a keygate server by test/e2e/server-relaunch.test.ts. Sent SIGUSR2 (by then the
// server is ready, in the image it serves from: a relaunch has happened), it builds objects of which a third stay
// alive for a while — what makes V8 grow its young generation to whatever most it allows — and then prints the young
// generation's size (V8's new space) on stderr, with the node flags of the image it ran in.
import { getHeapSpaceStatistics } from 'node:v8'

process.on('SIGUSR2', () => {
  const kept = []
  for (let i = 0; i < 3_000_000; i++) {
    const made = { index: i, text: `made ${i}` }
    if (i % 3 === 0) kept.push(made)
    if (kept.length > 200_000) kept.length = 0
  }
  const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')
  process.stderr.write(`young generation: ${young.space_size} bytes, node flags ${JSON.stringify(process.execArgv)}\n`)
})
