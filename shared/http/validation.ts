import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'
import { closestName } from '../closest-name.js'
import { clipInput } from '../clip-input.js'
import { ApiError } from '../errors/errors.js'
import { ROOT_KEY_PERMISSION, rootKeyPermissionProblem } from '../root-keys/root-key-actions.js'

// ajv-formats is CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  addFormatsModule) as FormatsPlugin

/**
 * Bodies are validated strictly (a string is never coerced into a boolean: wrong types are a 400) and
 * nothing is removed silently (an unknown field is a 400); query strings are text, so they are coerced.
 * `verbose` puts the failing value and its schema on each error (only when one is made, never on success): the
 * messages below read them to name an unknown field beside a missing one, and the closest known field.
 */
const OPTIONS = { allErrors: false, removeAdditional: false, useDefaults: true, strict: false, verbose: true } as const
const strict = addFormats(new Ajv({ ...OPTIONS, coerceTypes: false }))
const coercing = addFormats(new Ajv({ ...OPTIONS, coerceTypes: true }))

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? strict : coercing).compile<unknown>(schema as object)

/** A body validator exactly as Fastify's routes get one (for the route served ahead of Fastify). */
export function compileBodyValidator(schema: object): ValidateFunction {
  return strict.compile(schema)
}

/** A failed check: the field (its path in the request part, or the part itself) and what is wrong with it. */
interface Failure {
  field: string
  problem: string
}

/**
 * Renders Ajv errors as the contract's 400: the message names the field (`apiId: must be a string`), and v2's
 * `errors` locate it (`{location: "body.apiId", message: "must be a string"}`).
 */
export function schemaErrorFormatter(errors: ErrorObject[], dataVar: string): ApiError {
  const { field, problem } = errors.length > 0 ? describe(errors, dataVar) : { field: dataVar, problem: 'invalid' }
  const message = `${field}: ${problem}`
  const at = isPlainPath(field) ? [{ location: locationOf(field, dataVar), message: problem }] : undefined
  return new ApiError('BAD_REQUEST', message, undefined, { fields: at ?? [{ location: 'body', message }] })
}

/** The parts of a request as v2 names them in a location (`body.apiId`, `query.apiId`). */
const PARTS: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' }

/** `field` of the request part `dataVar` as v2 locates it: the part itself, or a path in it. */
function locationOf(field: string, dataVar: string): string {
  const part = PARTS[dataVar] ?? dataVar
  return field === dataVar || field === part ? part : `${part}.${field}`
}

/**
 * Whether a field path is made only of names a location can hold: letters, digits, `_`, `-`, `[]` and the dots
 * between them. A name of the client's with anything else (a space, a quote, a colon, clipped with `…`) cannot
 * be told from the path around it: such a failure is located at the body, its message quoting the name.
 */
const isPlainPath = (field: string) => /^[A-Za-z0-9_.[\]-]+$/.test(field)

/**
 * The first failure. Ajv reports an anyOf's branches before the anyOf itself: when the first error comes from
 * inside one, the innermost such anyOf says what the value could have been.
 */
function describe(errors: ErrorObject[], dataVar: string): Failure {
  const first = errors[0]!
  const union = errors.find((e) => isUnion(e) && first.schemaPath.startsWith(`${e.schemaPath}/`))
  return union ? describeUnion(union, errors, dataVar) : describeOne(first, dataVar)
}

const isUnion = (error: ErrorObject) => error.keyword === 'anyOf' || error.keyword === 'oneOf'

/** A value that matched no branch: what it could have been, or, when it had a branch's type, that branch's error. */
function describeUnion(union: ErrorObject, errors: ErrorObject[], dataVar: string): Failure {
  const branches = new Map<string, ErrorObject[]>()
  for (const error of errors) {
    if (error === union || !error.schemaPath.startsWith(`${union.schemaPath}/`)) continue
    const branch = error.schemaPath.slice(union.schemaPath.length + 1).split('/', 1)[0]!
    branches.set(branch, [...(branches.get(branch) ?? []), error])
  }
  if (branches.size === 0) return describeOne(union, dataVar)
  const alternatives: string[] = []
  const constants: string[] = []
  for (const branchErrors of branches.values()) {
    const [only] = branchErrors
    const shallow = branchErrors.length === 1 && only!.instancePath === union.instancePath
    if (shallow && only!.keyword === 'const') {
      const value = JSON.stringify((only!.params as { allowedValue: unknown }).allowedValue)
      constants.push(value)
      alternatives.push(value)
    } else if (shallow && only!.keyword === 'type') alternatives.push(article(String(only!.params.type)))
    // The value has this branch's type and fails inside it: that is what to fix.
    else return describe(branchErrors, dataVar)
  }
  const field = fieldOf(union, dataVar)
  if (constants.length === alternatives.length) return { field, problem: `must be one of ${constants.join(', ')}` }
  return { field, problem: `must be ${alternatives.slice(0, -1).join(', ')} or ${alternatives.at(-1)}` }
}

function describeOne(error: ErrorObject, dataVar: string): Failure {
  const path = pathOf(error)
  const field = fieldOf(error, dataVar)
  const failure = (problem: string) => ({ field, problem })
  // A field name the schema does not know is the client's text: quoted clipped, like every segment of the path.
  const at = (name: string) => (path ? `${path}.${clipInput(name)}` : clipInput(name))
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'required': {
      // Ajv checks `required` before unknown fields: a misspelt field would hide behind the one it was meant to be.
      const unknown = unknownFields(error)[0]
      const missing = { field: at(String(params.missingProperty)), problem: 'is required' }
      if (unknown === undefined) return missing
      const notKnown = `is not a known field${hint(error, unknown)}`
      return { field: at(unknown), problem: `${notKnown}; ${missing.field}: ${missing.problem}` }
    }
    case 'additionalProperties': {
      const name = String(params.additionalProperty)
      return { field: at(name), problem: `is not a known field${hint(error, name)}` }
    }
    case 'type':
      return failure(`must be ${article(String(params.type))}`)
    case 'minLength':
      return failure(params.limit === 1 ? 'must not be empty' : `must be at least ${count(params.limit, 'character')}`)
    case 'maxLength':
      return failure(`must be at most ${count(params.limit, 'character')}`)
    case 'minItems':
      return failure(params.limit === 1 ? 'must not be empty' : `must have at least ${count(params.limit, 'item')}`)
    case 'maxItems':
      return failure(`must have at most ${count(params.limit, 'item')}`)
    case 'pattern': {
      const explain = EXPLAINED_PATTERNS.get(String(params.pattern))
      const problem = explain && typeof error.data === 'string' ? explain(error.data) : undefined
      return failure(problem ?? error.message ?? 'is invalid')
    }
    case 'enum':
      return failure(`must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`)
    case 'const':
      return failure(`must be ${JSON.stringify(params.allowedValue)}`)
    case 'anyOf':
    case 'oneOf':
      return failure('has the wrong type')
    default:
      return failure(error.message ?? 'is invalid')
  }
}

/** Patterns whose refusal is explained in words rather than by the regular expression (the actions, for a root key). */
const EXPLAINED_PATTERNS = new Map<string, (value: string) => string | undefined>([
  [ROOT_KEY_PERMISSION.source, rootKeyPermissionProblem],
])

interface ObjectSchema {
  properties?: Record<string, unknown>
  additionalProperties?: unknown
}

/** Fields of the object an error is about that its schema does not know (when it refuses unknown fields). */
function unknownFields(error: ErrorObject): string[] {
  const schema = error.parentSchema as ObjectSchema | undefined
  const data: unknown = error.data
  if (schema?.additionalProperties !== false || typeof data !== 'object' || data === null) return []
  return Object.keys(data).filter((name) => !Object.hasOwn(schema.properties ?? {}, name))
}

/** ` (did you mean name?)` when a known field of the same object is a likely misspelling's target. */
function hint(error: ErrorObject, name: string): string {
  const properties = (error.parentSchema as ObjectSchema | undefined)?.properties
  const nearest = properties && closestName(name, Object.keys(properties))
  return nearest ? ` (did you mean ${nearest}?)` : ''
}

const pathOf = (error: ErrorObject) =>
  error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => clipInput(decodePointer(segment)))
    .join('.')
const fieldOf = (error: ErrorObject, dataVar: string) =>
  pathOf(error) || (dataVar === 'querystring' ? 'query' : dataVar)
const decodePointer = (segment: string) => segment.replace(/~1/g, '/').replace(/~0/g, '~')
const article = (type: string) => (type === 'null' ? 'null' : /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`)
const count = (n: unknown, noun: string) => `${String(n)} ${noun}${n === 1 ? '' : 's'}`
