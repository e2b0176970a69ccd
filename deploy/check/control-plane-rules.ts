import { keygateCommand, isKeygateContainer } from './keygate-containers.js'
import { selects, type LabelSelector } from './label-selectors.js'
import { objectName, type Manifest } from './manifest.js'
import type { PodTemplate } from './pod-templates.js'
import type { Problem } from './problem.js'

function runsControlPlane(pod: PodTemplate): boolean {
  return pod.spec.containers.some((container) => {
    if (!isKeygateContainer(container)) return false
    const resolved = keygateCommand(container)
    return 'command' in resolved && resolved.command === 'control-plane'
  })
}

/**
 * A control plane must survive a node drain: two replicas or more, and a PodDisruptionBudget in the same
 * rendering that selects its pods (so evictions take them one at a time).
 */
export function checkControlPlanes(source: string, pods: PodTemplate[], objects: Manifest[]): Problem[] {
  const problems: Problem[] = []
  const budgets = objects.filter((object) => object.kind === 'PodDisruptionBudget')
  for (const pod of pods.filter(runsControlPlane)) {
    const where = `${source} ${objectName(pod.owner)}`
    if (pod.owner.kind !== 'Deployment' && pod.owner.kind !== 'StatefulSet') {
      problems.push({ where, message: 'runs the control plane: use a Deployment' })
      continue
    }
    const replicas = (pod.owner.spec as { replicas?: number } | undefined)?.replicas ?? 1
    if (replicas < 2)
      problems.push({ where, message: `runs the control plane with ${replicas} replica(s): use 2 or more` })
    const namespace = pod.owner.metadata.namespace
    const covered = budgets.some(
      (budget) =>
        budget.metadata.namespace === namespace &&
        selects((budget.spec as { selector?: LabelSelector } | undefined)?.selector, pod.labels),
    )
    if (!covered)
      problems.push({ where, message: 'runs the control plane but no PodDisruptionBudget selects its pods' })
  }
  return problems
}
