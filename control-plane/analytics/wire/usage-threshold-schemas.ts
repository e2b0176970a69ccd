import { Type } from 'typebox'
import { StringEnum } from '../../../shared/http/schema-docs.js'
import { MAX_USAGE_THRESHOLDS, USAGE_MEASURES, USAGE_PERIODS } from '../../../shared/usage-threshold.js'

const UsageThresholdSchema = Type.Object(
  {
    measure: StringEnum(USAGE_MEASURES, {
      description: "What is counted: billable verifications (each api's billableOutcomes) or credits spent",
    }),
    period: StringEnum(USAGE_PERIODS, { description: 'Over the current UTC day or month' }),
    value: Type.Integer({
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'Crossed once the usage in the period reaches it: `usage.threshold` is sent, once a period',
    }),
  },
  { additionalProperties: false },
)

/** Keygate's `usageThresholds`, as identities.updateIdentity and keys.updateKey take it (every version). */
export const UsageThresholdsInput = (subject: 'identity' | 'key') =>
  Type.Array(UsageThresholdSchema, {
    maxItems: MAX_USAGE_THRESHOLDS,
    description:
      `Keygate's: replaces the ${subject}'s usage thresholds (\`[]\` removes them; left out, kept). Each crossing is ` +
      `sent as the webhook event \`usage.threshold\` once per period, within a minute (at most ${MAX_USAGE_THRESHOLDS})`,
    examples: [[{ measure: 'billable', period: 'month', value: 100_000 }]],
  })

/** Keygate's `usageThresholds` as responses show it: present when the identity or key holds some. */
export const UsageThresholdsResponse = (subject: 'identity' | 'key') =>
  Type.Array(UsageThresholdSchema, { description: `Keygate's: the ${subject}'s usage thresholds (absent: none)` })
