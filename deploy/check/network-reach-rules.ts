import type { IContainer } from 'kubernetes-models/v1/Container'
import type { IService } from 'kubernetes-models/v1/Service'
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import type { INetworkPolicyPeer } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyPeer'
import type { INetworkPolicyPort } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyPort'
import { isKeygateContainer, keygateCommand } from './keygate-containers.js'
import { keygateEnv } from './keygate-env.js'
import { selects, selectsByMap } from './label-selectors.js'
import { objectName, type Manifest } from './manifest.js'
import type { PodTemplate } from './pod-templates.js'
import type { Problem } from './problem.js'

/** A URL's port where it names none (`new URL` leaves it empty for its scheme's default). */
const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'redis:': 6379, 'rediss:': 6379 }

/** The pods' port a connection lands on: its number and its name, as far as the rendering tells them. */
interface TargetPort {
  number: number | undefined
  name: string | undefined
}

/** A Service a keygate container reaches through one of its URL options, the Service's pods, and their port. */
interface Reach {
  option: string
  service: Manifest
  pods: PodTemplate[]
  target: TargetPort
}

/**
 * A keygate container must be let through by the NetworkPolicies in front of what its URL options name (REDIS_URL,
 * CLICKHOUSE_URL, UPSTREAM_URL): for each literal URL whose host is a Service of the same rendering, every
 * NetworkPolicy selecting that Service's pods needs an ingress rule that admits the container's pod on the port the
 * connection lands on. Otherwise the pod starts and its connections time out: a control plane never ready on Redis, or
 * answering 503 for every analytics call. Admitted: a rule with no `from`, or a peer whose podSelector matches the
 * pod's labels (with a namespaceSelector beside it, or alone, taken as admitting: namespaces' labels are not in the
 * rendering).
 */
export function checkNetworkReach(source: string, objects: Manifest[], pods: PodTemplate[]): Problem[] {
  const policies = objects.filter((object) => object.kind === 'NetworkPolicy')
  if (policies.length === 0) return []
  const problems: Problem[] = []
  for (const pod of pods) {
    for (const container of pod.spec.containers.filter(isKeygateContainer)) {
      for (const reach of reachesOf(container, pod, objects, pods)) {
        for (const policy of policies) {
          const spec = (policy as unknown as INetworkPolicy).spec
          if (!spec || (spec.policyTypes !== undefined && !spec.policyTypes.includes('Ingress'))) continue
          const guards = reach.pods.some(
            (guarded) =>
              guarded.owner.metadata.namespace === policy.metadata.namespace &&
              selects(spec.podSelector, guarded.labels),
          )
          const admitted = (spec.ingress ?? []).some(
            (rule) =>
              covers(rule.ports, reach.target) && (!rule.from?.length || rule.from.some((peer) => admits(peer, pod))),
          )
          if (guards && !admitted)
            problems.push({
              where: `${source} ${objectName(policy)}`,
              message: `shuts ${objectName(pod.owner)} (container ${container.name}, ${reach.option}) out of ${objectName(reach.service)}: no ingress rule admits its pods on port ${portOf(reach.target)}, and its connections time out; give its pod template the labels a rule's podSelector asks for`,
            })
        }
      }
    }
  }
  return problems
}

/** The Services of the rendering that a container's literal URL options name. */
function reachesOf(container: IContainer, pod: PodTemplate, objects: Manifest[], pods: PodTemplate[]): Reach[] {
  const resolved = keygateCommand(container)
  if ('problem' in resolved) return []
  const reaches: Reach[] = []
  for (const [option, value] of Object.entries(keygateEnv(container, resolved.command).env)) {
    let url: URL
    try {
      url = new URL(value ?? '')
    } catch {
      continue
    }
    const service = serviceNamed(url.hostname, pod, objects)
    const spec = (service as IService | undefined)?.spec
    const port = url.port === '' ? DEFAULT_PORTS[url.protocol] : Number(url.port)
    const servicePort = spec?.ports?.find((entry) => entry.port === port)
    if (!service || !spec?.selector || !servicePort) continue
    const selected = pods.filter(
      (other) =>
        other.owner.metadata.namespace === service.metadata.namespace && selectsByMap(spec.selector, other.labels),
    )
    reaches.push({ option, service, pods: selected, target: targetOf(servicePort.targetPort ?? port, selected) })
  }
  return reaches
}

/**
 * The Service a host names in the pod's namespace: `name`, `name.namespace[.svc[.cluster.local]]`, or a StatefulSet
 * pod's `pod.name[…]`.
 */
function serviceNamed(host: string, pod: PodTemplate, objects: Manifest[]): Manifest | undefined {
  const labels = host.split('.')
  const named = (name: string | undefined) =>
    objects.find(
      (object) =>
        object.kind === 'Service' &&
        object.metadata.name === name &&
        object.metadata.namespace === pod.owner.metadata.namespace,
    )
  return named(labels[0]) ?? (labels.length > 1 ? named(labels[1]) : undefined)
}

/** A Service's targetPort as the pods' port: a name's number, or a number's name, when their containers declare it. */
function targetOf(target: number | string | undefined, pods: PodTemplate[]): TargetPort {
  const declared = pods.flatMap((pod) => pod.spec.containers.flatMap((container) => container.ports ?? []))
  const found = declared.find((port) =>
    typeof target === 'string' ? port.name === target : port.containerPort === target,
  )
  return typeof target === 'string'
    ? { number: found?.containerPort, name: target }
    : { number: target, name: found?.name }
}

const portOf = ({ number, name }: TargetPort) =>
  number === undefined ? String(name) : name === undefined ? String(number) : `${number} (${name})`

function covers(ports: INetworkPolicyPort[] | undefined, target: TargetPort): boolean {
  if (!ports?.length) return true
  return ports.some(({ port, endPort }) =>
    port === undefined
      ? true
      : typeof port === 'string'
        ? port === target.name
        : target.number !== undefined && port <= target.number && target.number <= (endPort ?? port),
  )
}

function admits(peer: INetworkPolicyPeer, pod: PodTemplate): boolean {
  if (peer.ipBlock) return peer.ipBlock.cidr.endsWith('/0')
  return peer.podSelector === undefined ? peer.namespaceSelector !== undefined : selects(peer.podSelector, pod.labels)
}
