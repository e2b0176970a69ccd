import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import type { INetworkPolicyIngressRule } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyIngressRule'
import { verifierPort } from './keygate-containers.js'
import { selects, type LabelSelector } from './label-selectors.js'
import { objectName, type Manifest } from './manifest.js'
import { containersOf, type PodTemplate } from './pod-templates.js'
import type { Problem } from './problem.js'
import { isClickhouseContainer } from './clickhouse-containers.js'
import { isRedisContainer } from './redis-containers.js'

/** A port only a few chosen pods should reach, and who those are. */
interface GuardedPort {
  number: number
  names: Set<string>
  what: string
  admit: string
}

const REDIS_DEFAULT_PORT = 6379
/** The official ClickHouse image's: HTTP, native protocol, interserver (EXPOSE 9000 8123 9009). */
const CLICKHOUSE_DEFAULT_PORTS = [8123, 9000, 9009]

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
    if (isClickhouseContainer(container)) {
      // The server listens on its ports whether the container declares them or not.
      const numbers = new Set([...ports.map((port) => port.containerPort), ...CLICKHOUSE_DEFAULT_PORTS])
      for (const number of numbers) {
        guarded.push({
          number,
          names: new Set(ports.filter((port) => port.containerPort === number).flatMap((port) => port.name ?? [])),
          what: "ClickHouse's port",
          admit: 'admit only labelled pods (podSelector): the control planes',
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
 * NetworkPolicies must not open Redis' port, ClickHouse's (every analytics row, and a password away from rewriting
 * them) or a verifier's own port (it answers verifyKey and /v1/authorize, not only /metrics) to whole namespaces or
 * to everyone: each rule covering such a port names pods.
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
      const guarded = guardedPorts(pod)
      for (const rule of spec.ingress ?? []) {
        const whom = tooBroad(rule)
        if (!whom) continue
        // One problem per server the rule opens, naming each of its ports it covers.
        const opened = new Map<string, GuardedPort[]>()
        for (const port of guarded.filter((port) => covers(rule, port)))
          opened.set(port.what, [...(opened.get(port.what) ?? []), port])
        for (const [what, ports] of opened) {
          problems.push({
            where: `${source} ${objectName(policy)}`,
            message: `opens ${what}${ports.length > 1 ? 's' : ''} ${ports.map((port) => port.number).join(', ')} of ${objectName(pod.owner)} to ${whom}: ${ports[0]!.admit}`,
          })
        }
      }
    }
  }
  return problems
}
