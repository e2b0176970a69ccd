import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'
import { ApiError } from '../errors.js'

// ajv-formats is CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  addFormatsModule) as FormatsPlugin

/**
 * Bodies are validated strictly (a string is never coerced into a boolean: wrong types are a 400) and
 * nothing is removed silently (an unknown field is a 400); query strings are text, so they are coerced.
 */
const strict = addFormats(
  new Ajv({ allErrors: false, coerceTypes: false, removeAdditional: false, useDefaults: true, strict: false }),
)
const coercing = addFormats(
  new Ajv({ allErrors: false, coerceTypes: true, removeAdditional: false, useDefaults: true, strict: false }),
)

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? strict : coercing).compile<unknown>(schema as object)

/** A body validator exactly as Fastify's routes get one (for the route served ahead of Fastify). */
export function compileBodyValidator(schema: object): ValidateFunction {
  return strict.compile(schema)
}

/** Renders Ajv errors as the contract's 400: the message names the field, e.g. `apiId: must be a string`. */
export function schemaErrorFormatter(errors: ErrorObject[], dataVar: string): Error {
  const error = errors[0]
  return new ApiError('BAD_REQUEST', error ? describe(error, dataVar) : `${dataVar}: invalid`)
}

function describe(error: ErrorObject, dataVar: string): string {
  const path = error.instancePath.split('/').slice(1).map(decodePointer).join('.')
  const field = path || (dataVar === 'querystring' ? 'query' : dataVar)
  const at = (name: string) => (path ? `${path}.${name}` : name)
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'required':
      return `${at(String(params.missingProperty))}: is required`
    case 'additionalProperties':
      return `${at(String(params.additionalProperty))}: is not a known field`
    case 'type':
      return `${field}: must be ${article(String(params.type))}`
    case 'anyOf':
      return `${field}: has the wrong type`
    default:
      return `${field}: ${error.message ?? 'is invalid'}`
  }
}

const decodePointer = (segment: string) => segment.replace(/~1/g, '/').replace(/~0/g, '~')
const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`)
