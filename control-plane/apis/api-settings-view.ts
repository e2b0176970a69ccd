import type { ApiSettings } from '../../shared/api-settings.js'
import { DEFAULT_LEAK_POLICY } from '../../shared/leak.js'

/** An api's settings as both wires answer them: the allow-list when set, the leak policy always (its default too). */
export function apiSettingsView(settings: ApiSettings) {
  return { ipAllowlist: settings.ipAllowlist, leakPolicy: settings.leakPolicy ?? DEFAULT_LEAK_POLICY }
}
