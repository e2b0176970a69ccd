import type { Manifest } from './manifest.js'

/** A kubernetes-models class: constructed from an object, `validate()` throws on a schema violation. */
interface ModelClass {
  new (data: unknown): { validate(): void }
  apiVersion: string
  kind: string
}

// API groups served by a package other than kubernetes-models (which holds every built-in group).
const PACKAGE_BY_GROUP: Record<string, string> = {
  'monitoring.coreos.com': '@kubernetes-models/prometheus-operator',
}

// Versions kubernetes-models still ships but current clusters no longer serve: valid against the schema,
// refused by the API server.
const REMOVED_API_VERSIONS = new Set([
  'extensions/v1beta1',
  'apps/v1beta1',
  'apps/v1beta2',
  'policy/v1beta1',
  'networking.k8s.io/v1beta1',
  'batch/v1beta1',
  'autoscaling/v2beta1',
  'autoscaling/v2beta2',
  'rbac.authorization.k8s.io/v1beta1',
  'storage.k8s.io/v1beta1',
  'admissionregistration.k8s.io/v1beta1',
  'apiextensions.k8s.io/v1beta1',
  'scheduling.k8s.io/v1beta1',
  'coordination.k8s.io/v1beta1',
  'discovery.k8s.io/v1beta1',
  'events.k8s.io/v1beta1',
  'node.k8s.io/v1beta1',
  'flowcontrol.apiserver.k8s.io/v1beta1',
  'flowcontrol.apiserver.k8s.io/v1beta2',
])

const API_VERSION = /^(?:([a-z0-9-]+(?:\.[a-z0-9-]+)*)\/)?(v\d+(?:(?:alpha|beta)\d+)?)$/
const KIND = /^[A-Z][A-Za-z0-9]*$/

const classes = new Map<string, Promise<ModelClass | undefined>>()

/** The model class for apiVersion + kind, imported on first use (one module per kind: importing all takes seconds). */
function modelClass(apiVersion: string, kind: string): Promise<ModelClass | undefined> {
  const id = `${apiVersion}/${kind}`
  let found = classes.get(id)
  if (!found) {
    found = loadModelClass(apiVersion, kind)
    classes.set(id, found)
  }
  return found
}

async function loadModelClass(apiVersion: string, kind: string): Promise<ModelClass | undefined> {
  const match = API_VERSION.exec(apiVersion)
  if (!match || !KIND.test(kind)) return undefined
  const group = match[1]
  const pkg = (group && PACKAGE_BY_GROUP[group]) ?? 'kubernetes-models'
  try {
    const module = (await import(`${pkg}/${apiVersion}/${kind}`)) as Record<string, unknown>
    const model = module[kind]
    // The module of a sub-type (e.g. DeploymentSpec) has no apiVersion/kind of its own: not a kind.
    if (typeof model !== 'function') return undefined
    const { apiVersion: modelApiVersion, kind: modelKind } = model as Partial<ModelClass>
    return modelApiVersion === apiVersion && modelKind === kind ? (model as ModelClass) : undefined
  } catch {
    // Not exported by the package (ERR_PACKAGE_PATH_NOT_EXPORTED under Node; vitest words it its own way):
    // no schema. Failing closed, a broken install shows up as every object lacking one.
    return undefined
  }
}

interface SchemaError {
  instancePath?: string
  message?: string
  params?: Record<string, unknown>
}

/**
 * Checks one object against its Kubernetes (or Prometheus Operator) schema, offline. Returns what is wrong:
 * wrong types, missing required fields, bad enum values; an object of a kind without a schema is itself a
 * problem, never passed unchecked. Unknown fields are not caught (the schemas allow them).
 */
export async function validateSchema(object: Manifest): Promise<string[]> {
  if (REMOVED_API_VERSIONS.has(object.apiVersion)) {
    return [`${object.apiVersion} is no longer served by Kubernetes: use the current apiVersion of ${object.kind}`]
  }
  const model = await modelClass(object.apiVersion, object.kind)
  if (!model) {
    return [
      `no schema for ${object.apiVersion} ${object.kind}: not a kind of Kubernetes or the Prometheus Operator known to kubernetes-models, so it cannot be validated`,
    ]
  }
  try {
    new model(object).validate()
    return []
  } catch (err) {
    const errors = (err as { errors?: SchemaError[] }).errors
    if (!Array.isArray(errors) || errors.length === 0) return [`invalid: ${(err as Error).message}`]
    return [...new Set(errors.map(describe))]
  }
}

function describe(error: SchemaError): string {
  const path = error.instancePath ? error.instancePath.slice(1).replaceAll('/', '.') : '(object)'
  const allowed = error.params?.allowedValues
  return `${path} ${error.message ?? 'is invalid'}${Array.isArray(allowed) ? ` (${allowed.join(', ')})` : ''}`
}
