import type { IContainer } from 'kubernetes-models/v1/Container'
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec'
import type { Manifest } from './manifest.js'

/** The pod an object runs, found where its kind keeps it. */
export interface PodTemplate {
  owner: Manifest
  labels: Record<string, string>
  spec: IPodSpec
  /** Runs until stopped (Deployment, StatefulSet, …), as opposed to a Job's run to completion. */
  longRunning: boolean
}

interface TemplateHolder {
  spec?: {
    template?: { metadata?: { labels?: Record<string, string> }; spec?: IPodSpec }
    jobTemplate?: TemplateHolder
  }
}

const LONG_RUNNING = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'ReplicationController'])

export function podTemplateOf(object: Manifest): PodTemplate | undefined {
  if (object.kind === 'Pod') {
    const spec = object.spec as IPodSpec | undefined
    return spec && { owner: object, labels: object.metadata.labels ?? {}, spec, longRunning: true }
  }
  let holder = object as TemplateHolder
  if (object.kind === 'CronJob') holder = holder.spec?.jobTemplate ?? {}
  const template = holder.spec?.template
  if (!template?.spec || !(LONG_RUNNING.has(object.kind) || object.kind === 'Job' || object.kind === 'CronJob'))
    return undefined
  return {
    owner: object,
    labels: template.metadata?.labels ?? {},
    spec: template.spec,
    longRunning: LONG_RUNNING.has(object.kind),
  }
}

/** Containers and init containers, each with how problems name it. */
export function containersOf(pod: PodTemplate): Array<{ container: IContainer; init: boolean }> {
  return [
    ...(pod.spec.initContainers ?? []).map((container) => ({ container, init: true })),
    ...pod.spec.containers.map((container) => ({ container, init: false })),
  ]
}

/** The image's repository name without registry, path or tag: `registry.example.com/team/keygate:1.2` → `keygate`. */
export function imageName(image: string | undefined): string {
  const withoutDigest = (image ?? '').split('@')[0]!
  const last = withoutDigest.split('/').at(-1) ?? ''
  return last.split(':')[0]!
}
