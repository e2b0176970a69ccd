/**
 * What the portal's session API answers (the contract of /v2/portal.*), from the portal's copies of shared/'s
 * declarations (generated/, written by `npm run build`), which a test holds to the routes' schemas: none is written
 * here.
 */
export type {
  NewPortalKey as NewKey,
  PortalAnswer,
  PortalAnswers,
  PortalKey,
  PortalMethod,
  PortalSession as Session,
  PortalThreshold,
  UsageBucket,
} from './generated/portal-answers.js'
export type { PortalScope as Scope, ProblemBody } from './generated/ui-shapes.js'
