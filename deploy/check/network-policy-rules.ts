import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import type { INetworkPolicyIngressRule } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyIngressRule'
import { verifierPort } from './keygate-containers.js'
import { selects, type LabelSelector } from './label-selectors.js'
import { objectName, type Manifest } from './manifest.js'
import { containersOf, type PodTemplate } from './pod-templates.js'
import type { Problem } from './problem.js'
import { isRedisContainer } from './redis-containers.js'

/** A port only a few chosen pods should reach, and who those are. */
interface GuardedPort {
  number: number
  names: Set<string>
  what: string
  admit: string
}

const REDIS_DEFAULT_PORT = 6379

function guardedPorts(pod: PodTemplate): GuardedPort[] {
  const guarded: GuardedPort[] = []
  for (const { container } of containersOf(pod)) {
    const ports = container.ports ?? []
    if (isRedisContainer(container)) {
      for (const port of ports.length > 0 ? ports : [{ containerPort: REDIS_DEFAULT_PORT, name: undefined }]) {
        guarded.push({
          number: port.containerPort,
          names: new Set(port.name ? [port.name] : []),
          what: "Redis' port",
          admit: 'admit only labelled pods (podSelector) of this namespace and of namespaces that opt in by a label',
        })
      }
    }
    const verifier = verifierPort(container)
    if (verifier !== undefined) {
      guarded.push({
        number: verifier,
        names: new Set(
          ports.filter((port) => port.containerPort === verifier).flatMap((port) => (port.name ? [port.name] : [])),
        ),
        what: "the verifier's own port (verifyKey, /v1/authorize)",
        admit: "admit only the pods that scrape it (Prometheus': namespaceSelector and podSelector in one peer)",
      })
    }
  }
  return guarded
}

const isEmpty = (selector: LabelSelector | undefined) =>
  selector !== undefined && Object.keys(selector.matchLabels ?? {}).length === 0 && !selector.matchExpressions?.length

/** Whom a rule admits, when that is more than a chosen set of pods. */
function tooBroad(rule: INetworkPolicyIngressRule): string | undefined {
  if (!rule.from?.length) return 'every source (a rule with no from)'
  for (const peer of rule.from) {
    const { ipBlock } = peer
    const namespaces = peer.namespaceSelector
    const pods = peer.podSelector
    if (ipBlock) {
      if (ipBlock.cidr.endsWith('/0')) return `every address (ipBlock ${ipBlock.cidr})`
      continue
    }
    if (isEmpty(namespaces)) return 'pods of every namespace (namespaceSelector: {})'
    if (namespaces && (pods === undefined || isEmpty(pods)))
      return 'every pod of the namespaces its namespaceSelector picks (no podSelector)'
    if (!namespaces && isEmpty(pods)) return 'every pod of its namespace (podSelector: {})'
  }
  return undefined
}

function covers(rule: INetworkPolicyIngressRule, guarded: GuardedPort): boolean {
  if (!rule.ports?.length) return true
  return rule.ports.some(
    ({ port, endPort }) =>
      port === undefined ||
      (typeof port === 'string'
        ? guarded.names.has(port)
        : port <= guarded.number && guarded.number <= (endPort ?? port)),
  )
}

/**
 * NetworkPolicies must not open Redis' port or a verifier's own port (it answers verifyKey and /v1/authorize,
 * not only /metrics) to whole namespaces or to everyone: each rule covering such a port names pods.
 */
export function checkNetworkPolicies(source: string, objects: Manifest[], pods: PodTemplate[]): Problem[] {
  const problems: Problem[] = []
  for (const policy of objects.filter((object) => object.kind === 'NetworkPolicy')) {
    const spec = (policy as unknown as INetworkPolicy).spec
    if (!spec || (spec.policyTypes && !spec.policyTypes.includes('Ingress'))) continue
    const selected = pods.filter(
      (pod) => pod.owner.metadata.namespace === policy.metadata.namespace && selects(spec.podSelector, pod.labels),
    )
    for (const pod of selected) {
      for (const guarded of guardedPorts(pod)) {
        for (const rule of spec.ingress ?? []) {
          const whom = covers(rule, guarded) ? tooBroad(rule) : undefined
          if (whom) {
            problems.push({
              where: `${source} ${objectName(policy)}`,
              message: `opens ${guarded.what} ${guarded.number} of ${objectName(pod.owner)} to ${whom}: ${guarded.admit}`,
            })
          }
        }
      }
    }
  }
  return problems
}
