import { specs } from '../../shared/config/config.js'
import { isKeygateContainer } from './keygate-containers.js'
import { objectName } from './manifest.js'
import { containersOf, type PodTemplate } from './pod-templates.js'
import type { Problem } from './problem.js'

// Service links give every container `<SERVICE>_PORT=tcp://<ip>:<port>` (and _SERVICE_HOST, _PORT_<n>_TCP, …)
// for each Service of the namespace: the Keygate options of that shape, and the Service name that sets each.
const COLLISIONS = [...new Set(Object.values(specs).flatMap((options) => options.map((option) => option.env)))]
  .filter((name) => name.endsWith('_PORT'))
  .map(
    (name) =>
      `a Service named ${name.slice(0, -'_PORT'.length).toLowerCase().replaceAll('_', '-')} sets ${name}=tcp://…`,
  )

/**
 * A pod that runs keygate must set `enableServiceLinks: false`: with links on, a Service that happens to be
 * named after an option (`proxy`) hands Keygate a value it refuses, and the process does not start.
 */
export function checkServiceLinks(source: string, pod: PodTemplate): Problem[] {
  if (pod.spec.enableServiceLinks === false) return []
  if (!containersOf(pod).some(({ container }) => isKeygateContainer(container))) return []
  return [
    {
      where: `${source} ${objectName(pod.owner)}`,
      message: `runs keygate without enableServiceLinks: false: ${COLLISIONS.join(', ')}, which Keygate reads as its own option and refuses to start`,
    },
  ]
}
