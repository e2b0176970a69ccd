import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import type { IService } from 'kubernetes-models/v1/Service'
import type { IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor'
import { selects, selectsByMap } from './label-selectors.js'
import { objectName, type Manifest } from './manifest.js'
import type { PodTemplate } from './pod-templates.js'
import type { Problem } from './problem.js'

/**
 * Names that only meet at run time, checked within one rendering: a Service must select pods and target
 * ports they name, a ServiceMonitor must select a Service and scrape a port it names, a NetworkPolicy must
 * select pods and open ports they name. Each of these fails silently in a cluster (no endpoints, no
 * scrape, traffic dropped). With `complete` false (some object failed its schema and is not in `objects`),
 * "selects nothing" is not reported: it would only echo that failure.
 */
export function checkReferences(
  source: string,
  objects: Manifest[],
  pods: PodTemplate[],
  complete: boolean,
): Problem[] {
  const problems: Problem[] = []
  const add = (object: Manifest, message: string) =>
    problems.push({ where: `${source} ${objectName(object)}`, message })
  const sameNamespace = (a: Manifest, b: Manifest) => a.metadata.namespace === b.metadata.namespace
  const portNames = (selected: PodTemplate[]) =>
    new Set(selected.flatMap((pod) => pod.spec.containers.flatMap((c) => (c.ports ?? []).map((p) => p.name))))
  const services = objects.filter((object) => object.kind === 'Service')

  for (const service of services) {
    const spec = (service as IService).spec
    if (!spec?.selector) continue // endpoints managed by hand
    const selected = pods.filter((pod) => sameNamespace(pod.owner, service) && selectsByMap(spec.selector, pod.labels))
    if (selected.length === 0) {
      if (complete) add(service, 'its selector matches no pods in this rendering')
      continue
    }
    const names = portNames(selected)
    for (const port of spec.ports ?? []) {
      if (typeof port.targetPort === 'string' && !names.has(port.targetPort))
        add(service, `targetPort ${JSON.stringify(port.targetPort)} is not a port the selected pods name`)
    }
  }

  // A ServiceMonitor in a rendering without Services watches something deployed elsewhere: not checkable here.
  for (const monitor of objects.filter((object) => object.kind === 'ServiceMonitor' && services.length > 0)) {
    const spec = (monitor as unknown as IServiceMonitor).spec
    if (spec.namespaceSelector) continue
    const selected = services.filter(
      (service) => sameNamespace(service, monitor) && selects(spec.selector, service.metadata.labels ?? {}),
    )
    if (selected.length === 0) {
      if (complete) add(monitor, 'its selector matches no Service in this rendering')
      continue
    }
    const names = new Set(
      selected.flatMap((service) => ((service as IService).spec?.ports ?? []).map((port) => port.name)),
    )
    for (const endpoint of spec.endpoints) {
      if (endpoint.port !== undefined && !names.has(endpoint.port))
        add(monitor, `scrapes port ${JSON.stringify(endpoint.port)}, which the selected Services do not name`)
    }
  }

  for (const policy of objects.filter((object) => object.kind === 'NetworkPolicy')) {
    const spec = (policy as unknown as INetworkPolicy).spec
    const selector = spec?.podSelector
    // An empty podSelector is a namespace-wide policy (default deny and the like): nothing to match here.
    if (
      !spec ||
      !selector ||
      (Object.keys(selector.matchLabels ?? {}).length === 0 && !selector.matchExpressions?.length)
    )
      continue
    const selected = pods.filter((pod) => sameNamespace(pod.owner, policy) && selects(selector, pod.labels))
    if (selected.length === 0) {
      if (complete) add(policy, 'its podSelector matches no pods in this rendering')
      continue
    }
    const names = portNames(selected)
    for (const rule of spec.ingress ?? []) {
      for (const port of rule.ports ?? []) {
        if (typeof port.port === 'string' && !names.has(port.port))
          add(policy, `opens port ${JSON.stringify(port.port)}, which the selected pods do not name`)
      }
    }
  }
  return problems
}
