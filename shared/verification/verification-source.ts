/** Where a verification was asked: the call, or the path of the process, that verified the key. */
export const VERIFICATION_SOURCES = ['v1.verifyKey', 'v2.verifyKey', 'authorize', 'proxy'] as const
export type VerificationSource = (typeof VERIFICATION_SOURCES)[number]
