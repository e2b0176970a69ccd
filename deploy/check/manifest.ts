/** A rendered Kubernetes object: what every rule may rely on once its schema has validated. */
export interface Manifest {
  apiVersion: string
  kind: string
  metadata: { name: string; namespace?: string; labels?: Record<string, string> }
  [field: string]: unknown
}

/** The objects one kustomization renders to, named by the directory they came from. */
export interface Rendering {
  source: string
  objects: Manifest[]
}

export function isManifest(value: unknown): value is Manifest {
  if (typeof value !== 'object' || value === null) return false
  const { apiVersion, kind, metadata } = value as Record<string, unknown>
  return (
    typeof apiVersion === 'string' &&
    typeof kind === 'string' &&
    typeof metadata === 'object' &&
    metadata !== null &&
    typeof (metadata as Record<string, unknown>).name === 'string'
  )
}

/** `Kind/name`, with the namespace when it has one: how problems name an object. */
export function objectName(object: Manifest): string {
  const namespace = object.metadata.namespace ? `${object.metadata.namespace}/` : ''
  return `${object.kind}/${namespace}${object.metadata.name}`
}
