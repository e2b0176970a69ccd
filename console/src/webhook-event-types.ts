/**
 * The event types a webhook endpoint can subscribe to, in the order the form lists them: shared/'s list, from the
 * console's copy of the shapes it reads (generated/ui-shapes.ts, written by `npm run build`).
 */
export { WEBHOOK_EVENT_TYPES as EVENT_TYPES } from './generated/ui-shapes.js'
