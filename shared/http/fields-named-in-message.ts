import type { FieldProblem } from '../errors.js'

/**
 * The field an error built without `fields` names at the start of its message (`permissions: …` →
 * `{location: "body.permissions", message: "…"}`; `authorization: …` → `header.authorization`), else the body.
 * Only the errors of two files reach it: shared/root-key-principal.ts (a root key missing or malformed) and
 * verifier/v2-verify-key-route.ts (a permissions query that does not parse). Every other error states its fields
 * (errors.ts); so should these, and this go.
 */
export function fieldsNamedInMessage(message: string): FieldProblem[] {
  const named = /^([A-Za-z0-9_.[\]-]+): ([\s\S]+)$/.exec(message)
  if (!named) return [{ location: 'body', message }]
  const [, field, problem] = named as unknown as [string, string, string]
  return [{ location: field === 'authorization' ? 'header.authorization' : `body.${field}`, message: problem }]
}
