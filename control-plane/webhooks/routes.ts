import type { ManagementRoute } from '../http/management-route.js'
import { createEndpointV1 } from './create-endpoint.v1.js'
import { deleteEndpointV1 } from './delete-endpoint.v1.js'
import { getEndpointV1 } from './get-endpoint.v1.js'
import { listAttemptsV1 } from './list-attempts.v1.js'
import { listEndpointsV1 } from './list-endpoints.v1.js'
import { replayV1 } from './replay.v1.js'
import { rotateSecretV1 } from './rotate-secret.v1.js'
import { sendTestV1 } from './send-test.v1.js'
import { updateEndpointV1 } from './update-endpoint.v1.js'

/** The webhooks service: Keygate's own, in v1 style only. */
export const WEBHOOKS_ROUTES: readonly ManagementRoute[] = [
  createEndpointV1,
  listEndpointsV1,
  getEndpointV1,
  updateEndpointV1,
  deleteEndpointV1,
  rotateSecretV1,
  listAttemptsV1,
  replayV1,
  sendTestV1,
]
