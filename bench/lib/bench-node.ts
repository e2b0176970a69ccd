/** The oldest Node major the bench's CPU figures are judged on: the Docker image's runtime. */
export const JUDGED_NODE_MAJOR = 24

/**
 * A warning for a bench run on a Node older than the judged one (`version` as process.versions.node), else undefined.
 * Every server the bench starts runs on the bench's own Node (process.execPath); on Node 20 a verifier process can
 * fall into a slow state at random and keep it across every window measured, so a CPU figure taken there says as
 * much about which process drew it as about the code. Node 22 is not vouched for either.
 */
export function benchNodeWarning(version: string): string | undefined {
  const major = Number(version.split('.')[0])
  if (major >= JUDGED_NODE_MAJOR) return undefined
  return (
    `bench: running on Node ${version}; on Node 20 a verifier process can fall into a slow state at random: ` +
    `judge on Node ${JUDGED_NODE_MAJOR}, the image’s runtime (bench/README.md says how)`
  )
}
