import { spawnSync } from 'node:child_process'

/**
 * The template directories (relative to `root`) that are exactly as committed: no change, staged or not, and no
 * new file. The README has users fill the examples in place, so an edited example is the user's manifest, and a
 * placeholder left in it must fail the check like anywhere else. Where git cannot tell (no git, not a checkout),
 * none are: a placeholder is then a problem, the safe side.
 */
export function pristineTemplates(root: string, dirs: string[]): string[] {
  return dirs.filter((dir) => {
    const status = spawnSync('git', ['status', '--porcelain', '--untracked-files=all', '--', dir], {
      cwd: root,
      encoding: 'utf8',
    })
    return status.status === 0 && status.stdout === ''
  })
}
