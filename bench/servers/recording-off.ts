/**
 * Loaded into a verifier (`node --import …/recording-off.js keygate.js verifier`): the process records nothing for
 * analytics. bench:cpu measures a cache hit with and without recording this way, in two processes started by the same
 * command, with the same configuration and the same node flags, that differ only here: `keygate` sets a server's
 * process up (relaunched with its server flags, pretenuring off, the tick object held) in ways a bench script that
 * assembled a verifier itself would have to copy, and a copy drifting from the CLI would be measured as recording.
 *
 * Every `record…` method of the recorder (one a verification calls, whichever it is) becomes a function that does
 * nothing: each verification still makes the call, which V8 inlines to nothing, and the shipper still runs every 2 s
 * and finds nothing to hand over. What is left of recording is the verifier's two performance.now() calls that time a
 * verification for its row. Preloads run again in the image a verifier relaunches itself as.
 */
import { AnalyticsRecorder } from '../../shared/analytics/analytics-recorder.js'

const methods = AnalyticsRecorder.prototype as unknown as Record<string, unknown>
const recording = Object.getOwnPropertyNames(methods).filter(
  (name) => name.startsWith('record') && typeof methods[name] === 'function',
)
if (recording.length === 0) throw new Error('recording-off.js: AnalyticsRecorder has no record… method to turn off')
for (const name of recording) methods[name] = () => {}
