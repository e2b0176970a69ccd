import type { ManagementRoute } from '../http/management-route.js'
import { importKeysV1 } from './import-keys.v1.js'
import { importKeysV2 } from './import-keys.v2.js'

/** Importing existing keys: v1's migrations.createKeys and v2's keys.migrateKeys, one operation. */
export const MIGRATIONS_ROUTES: readonly ManagementRoute[] = [importKeysV1, importKeysV2]
