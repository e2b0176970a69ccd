import { v1Route } from '../http/management-route.js'
import { ReportLeakAnswer, ReportLeakBody } from './wire/leak-schemas.js'
import { reportLeak } from './report-leak.js'

/** Keygate's keys.reportLeak on v1: a key the root key may not act on is a 404, as one that does not exist. */
export const reportLeakV1 = v1Route({
  operation: 'keys.reportLeak',
  method: 'POST',
  doc: {
    summary: "Report a key leaked: its api's leak policy marks, disables or deletes it",
    tag: 'keys',
  },
  input: ReportLeakBody,
  answer: ReportLeakAnswer,
  handle: (report, caller, deps) => reportLeak(deps, caller, report),
})
