import { DEFAULT_BILLABLE_OUTCOMES, type ApiSettings } from '../../shared/api-settings.js'
import { DEFAULT_LEAK_POLICY } from '../../shared/leak.js'

/**
 * An api's settings as both wires answer them: the allow-list when set, the leak policy and the billable outcomes
 * always (their defaults too).
 */
export function apiSettingsView(settings: ApiSettings) {
  return {
    ipAllowlist: settings.ipAllowlist,
    leakPolicy: settings.leakPolicy ?? DEFAULT_LEAK_POLICY,
    billableOutcomes: settings.billableOutcomes ?? [...DEFAULT_BILLABLE_OUTCOMES],
  }
}
