import type { IContainer } from 'kubernetes-models/v1/Container'
import type { IProbe } from 'kubernetes-models/v1/Probe'
import { objectName } from './manifest.js'
import { containersOf, type PodTemplate } from './pod-templates.js'
import type { Problem } from './problem.js'

/**
 * What every container we ship must have: probes (on long-running pods), resource requests and a memory
 * limit, and a locked-down security context. No exceptions — Redis and nginx run this way too.
 */
export function checkContainers(source: string, pod: PodTemplate): Problem[] {
  const problems: Problem[] = []
  for (const { container, init } of containersOf(pod)) {
    const where = `${source} ${objectName(pod.owner)} ${init ? 'init container' : 'container'} ${container.name}`
    const add = (message: string) => problems.push({ where, message })
    // Native sidecars (init containers with restartPolicy Always) run alongside the pod: probes apply.
    const runsAlongside = !init || container.restartPolicy === 'Always'
    if (pod.longRunning && runsAlongside) {
      if (!container.readinessProbe) add('no readinessProbe')
      if (!container.livenessProbe) add('no livenessProbe')
    }
    for (const message of probePortProblems(container)) add(message)
    for (const message of resourceProblems(container)) add(message)
    for (const message of securityProblems(container, pod)) add(message)
  }
  return problems
}

// A CPU limit is left to the operator: it throttles a latency-sensitive process without protecting the node,
// whereas a missing memory limit lets one pod take the node's memory.
function resourceProblems(container: IContainer): string[] {
  const { requests = {}, limits = {} } = container.resources ?? {}
  const missing = [
    requests.cpu === undefined && 'resources.requests.cpu',
    requests.memory === undefined && 'resources.requests.memory',
    limits.memory === undefined && 'resources.limits.memory',
  ].filter((name): name is string => typeof name === 'string')
  return missing.map((name) => `no ${name}`)
}

function securityProblems(container: IContainer, pod: PodTemplate): string[] {
  const own = container.securityContext ?? {}
  const podLevel = pod.spec.securityContext ?? {}
  const problems: string[] = []
  // The container's setting wins over the pod's, as in Kubernetes.
  if ((own.runAsNonRoot ?? podLevel.runAsNonRoot) !== true)
    problems.push('securityContext.runAsNonRoot is not true (container or pod)')
  const user = own.runAsUser ?? podLevel.runAsUser
  if (user === undefined)
    problems.push(
      'no numeric securityContext.runAsUser (container or pod): runAsNonRoot cannot verify an image whose USER is a name',
    )
  else if (user === 0) problems.push('securityContext.runAsUser is 0 (root)')
  if (own.readOnlyRootFilesystem !== true) problems.push('securityContext.readOnlyRootFilesystem is not true')
  if (own.allowPrivilegeEscalation !== false) problems.push('securityContext.allowPrivilegeEscalation is not false')
  if (own.privileged === true) problems.push('securityContext.privileged is true')
  if (!(own.capabilities?.drop ?? []).includes('ALL'))
    problems.push('securityContext.capabilities.drop does not include ALL')
  const seccomp = (own.seccompProfile ?? podLevel.seccompProfile)?.type
  if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost')
    problems.push('securityContext.seccompProfile.type is not RuntimeDefault (container or pod)')
  return problems
}

/** A probe on a named port the container does not declare fails forever at run time. */
function probePortProblems(container: IContainer): string[] {
  const names = new Set((container.ports ?? []).map((port) => port.name).filter(Boolean))
  const probes: Array<[string, IProbe | undefined]> = [
    ['readinessProbe', container.readinessProbe],
    ['livenessProbe', container.livenessProbe],
    ['startupProbe', container.startupProbe],
  ]
  const problems: string[] = []
  for (const [field, probe] of probes) {
    const port = probe?.httpGet?.port ?? probe?.tcpSocket?.port ?? probe?.grpc?.port
    if (typeof port === 'string' && !names.has(port))
      problems.push(`${field} uses port ${JSON.stringify(port)}, which the container does not name`)
  }
  return problems
}
