// Preloaded (node --import) into a keygate server by test/e2e/allocation-site-pretenuring.test.ts. A second after
// start-up (the server's own start-up has then turned pretenuring off, or not), it builds object literals of which
// thousands at a time stay alive across scavenges: what makes V8 pretenure a literal when its pretenuring is on, and
// what V8 then traces with --trace-pretenuring-statistics. With pretenuring off V8 processes no such feedback. It says
// when it is done, so that the test knows that the feedback, if any, has been made.
import { setTimeout } from 'node:timers'

setTimeout(() => {
  const kept = []
  for (let i = 0; i < 300_000; i++) {
    kept.push({ index: i, list: [i] })
    if (kept.length > 20_000) kept.length = 0
  }
  process.stderr.write('pretenuring probe: literals built\n')
}, 1000).unref()
