import type { ManagementRoute } from '../http/management-route.js'
import { CHANGE_KEY_GRANTS_V1 } from './grants/change-key-grants.v1.js'
import { CHANGE_KEY_GRANTS_V2 } from './grants/change-key-grants.v2.js'
import { createKeyV1 } from './create-key.v1.js'
import { createKeyV2 } from './create-key.v2.js'
import { deleteKeyV1 } from './delete-key.v1.js'
import { deleteKeyV2 } from './delete-key.v2.js'
import { getKeyV1 } from './get-key.v1.js'
import { getKeyV2 } from './get-key.v2.js'
import { getVerificationsV1 } from './get-verifications.v1.js'
import { rerollKeyV1 } from './reroll-key.v1.js'
import { rerollKeyV2 } from './reroll-key.v2.js'
import { reportLeakV1 } from '../leaks/report-leak.v1.js'
import { reportLeakV2 } from '../leaks/report-leak.v2.js'
import { updateCreditsV2 } from './credits/update-credits.v2.js'
import { updateRemainingV1 } from './credits/update-credits.v1.js'
import { updateKeyV1 } from './update-key.v1.js'
import { updateKeyV2 } from './update-key.v2.js'
import { whoamiV1 } from './whoami.v1.js'
import { whoamiV2 } from './whoami.v2.js'

/** The keys service in both wire formats. */
export const KEYS_ROUTES: readonly ManagementRoute[] = [
  createKeyV1,
  getKeyV1,
  updateKeyV1,
  deleteKeyV1,
  ...CHANGE_KEY_GRANTS_V1,
  whoamiV1,
  rerollKeyV1,
  updateRemainingV1,
  getVerificationsV1,
  reportLeakV1,
  createKeyV2,
  getKeyV2,
  updateKeyV2,
  deleteKeyV2,
  ...CHANGE_KEY_GRANTS_V2,
  whoamiV2,
  rerollKeyV2,
  updateCreditsV2,
  reportLeakV2,
]
