import { v2Route } from '../http/management-route.js'
import { ReportLeakAnswer, ReportLeakBody } from './wire/leak-schemas.js'
import { reportLeak } from './report-leak.js'

/** Keygate's keys.reportLeak on v2, answered in v2's envelope. */
export const reportLeakV2 = v2Route({
  operation: 'keys.reportLeak',
  doc: { summary: "Report a key leaked: its api's leak policy marks, disables or deletes it", tag: 'v2 keys' },
  body: ReportLeakBody,
  data: ReportLeakAnswer,
  handle: async (report, caller, deps) => ({ data: await reportLeak(deps, caller, report) }),
})
