import type { IContainer } from 'kubernetes-models/v1/Container'
import { keygateCommand, isKeygateContainer } from './keygate-containers.js'
import { selects, type LabelSelector } from './label-selectors.js'
import { objectName, type Manifest } from './manifest.js'
import type { PodTemplate } from './pod-templates.js'
import type { Problem } from './problem.js'

function controlPlaneContainer(pod: PodTemplate): IContainer | undefined {
  return pod.spec.containers.find((container) => {
    if (!isKeygateContainer(container)) return false
    const resolved = keygateCommand(container)
    return 'command' in resolved && resolved.command === 'control-plane'
  })
}

/** Whether the control plane is given a ClickHouse server (CLICKHOUSE_URL or --clickhouse-url), literal or not. */
function hasAnalyticsServer(container: IContainer): boolean {
  const resolved = keygateCommand(container)
  const flags = 'flags' in resolved ? resolved.flags : []
  return (
    (container.env ?? []).some((variable) => variable.name === 'CLICKHOUSE_URL') ||
    flags.some((flag) => flag === '--clickhouse-url' || flag.startsWith('--clickhouse-url='))
  )
}

/**
 * A control plane must survive a node drain: two replicas or more, and a PodDisruptionBudget in the same
 * rendering that selects its pods (so evictions take them one at a time). Its replicas must then share a ClickHouse
 * server for analytics: on the embedded engine only the one holding the ingest lease records and answers them.
 */
export function checkControlPlanes(source: string, pods: PodTemplate[], objects: Manifest[]): Problem[] {
  const problems: Problem[] = []
  const budgets = objects.filter((object) => object.kind === 'PodDisruptionBudget')
  for (const pod of pods) {
    const container = controlPlaneContainer(pod)
    if (!container) continue
    const where = `${source} ${objectName(pod.owner)}`
    if (pod.owner.kind !== 'Deployment' && pod.owner.kind !== 'StatefulSet') {
      problems.push({ where, message: 'runs the control plane: use a Deployment' })
      continue
    }
    const replicas = (pod.owner.spec as { replicas?: number } | undefined)?.replicas ?? 1
    if (replicas < 2)
      problems.push({ where, message: `runs the control plane with ${replicas} replica(s): use 2 or more` })
    else if (!hasAnalyticsServer(container))
      problems.push({
        where,
        message: `runs ${replicas} control planes on the embedded analytics engine (no CLICKHOUSE_URL): only the one holding the ingest lease records and answers analytics, the others answer 412; give them a ClickHouse server (CLICKHOUSE_URL)`,
      })
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
