/**
 * Records as Keygate's v1 API answers them (API.md), from the console's copies of shared/'s declarations
 * (generated/, written by `npm run build`), which a test holds to the routes' schemas: none is written here.
 */
export type {
  ConsoleAnswers,
  ConsoleOperation,
  DeliveryAttempt,
  Identity,
  Key,
  ListedApi,
  ListedIdentity,
  NewKey,
  Override,
  Permission,
  Role,
  RootKey,
  TestDelivery,
  Verifications,
  WebhookEndpoint,
} from './generated/console-answers.js'
export type { AuditEntry, ErrorBody, NamedRateLimit, ProblemBody } from './generated/ui-shapes.js'
