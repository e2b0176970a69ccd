/**
 * Which of Unkey's wire formats an operation shared by both answers. Where their contracts differ (which code a
 * refusal gets, which permissions a call needs up front), the operation follows the caller's.
 */
export type WireFormat = 'v1' | 'v2'
