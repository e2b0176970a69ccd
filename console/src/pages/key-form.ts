import { fromLocalInput, splitList, toLocalInput } from '../format.js'
import type { Key } from '../types.js'
import { parseJsonObject } from '../json-input.js'

/** A key's fields as typed into the create and edit forms: text, turned into a request body by bodyOf. */
export interface KeyForm {
  name: string
  prefix: string
  externalId: string
  meta: string
  expires: string
  remaining: string
  refillInterval: '' | 'daily' | 'monthly'
  refillAmount: string
  refillDay: string
  ratelimitLimit: string
  ratelimitDuration: string
  ratelimitAsync: boolean
  roles: string
  permissions: string
  enabled: boolean
}

export const EMPTY_KEY_FORM: KeyForm = {
  name: '',
  prefix: '',
  externalId: '',
  meta: '',
  expires: '',
  remaining: '',
  refillInterval: '',
  refillAmount: '',
  refillDay: '',
  ratelimitLimit: '',
  ratelimitDuration: '60000',
  ratelimitAsync: true,
  roles: '',
  permissions: '',
  enabled: true,
}

/** The edit form of a key, filled with what it holds. */
export function formOf(key: Key): KeyForm {
  return {
    ...EMPTY_KEY_FORM,
    name: key.name ?? '',
    externalId: key.ownerId ?? '',
    meta: key.meta ? JSON.stringify(key.meta, null, 2) : '',
    expires: toLocalInput(key.expires),
    remaining: key.remaining === undefined ? '' : String(key.remaining),
    refillInterval: key.refill?.interval ?? '',
    refillAmount: key.refill ? String(key.refill.amount) : '',
    refillDay: key.refill?.refillDay === undefined ? '' : String(key.refill.refillDay),
    ratelimitLimit: key.ratelimit ? String(key.ratelimit.limit) : '',
    ratelimitDuration: key.ratelimit ? String(key.ratelimit.duration) : '60000',
    ratelimitAsync: key.ratelimit?.async ?? true,
    roles: (key.roles ?? []).join(', '),
    permissions: (key.permissions ?? []).join(', '),
    enabled: key.enabled,
  }
}

export type KeyFormProblems = Partial<Record<keyof KeyForm, string>>

const whole = (text: string) => (/^\d+$/.test(text.trim()) ? Number(text.trim()) : undefined)

/**
 * The request body of the form: for keys.createKey (fields left empty are left out) or keys.updateKey (`null`
 * clears them). What the console can tell is wrong before asking (meta that is not a JSON object, a number that is
 * not one) comes back as problems by field; the API checks the rest and says so.
 */
export function bodyOf(
  form: KeyForm,
  mode: 'create' | 'update',
): { body: Record<string, unknown>; problems: KeyFormProblems } {
  const problems: KeyFormProblems = {}
  const body: Record<string, unknown> = {}
  const cleared = mode === 'update' ? null : undefined
  const set = (field: string, value: unknown) => {
    if (value !== undefined) body[field] = value
  }
  const number = (field: keyof KeyForm, text: string) => {
    if (!text.trim()) return undefined
    const value = whole(text)
    if (value === undefined) problems[field] = 'must be a whole number'
    return value
  }
  set('name', form.name.trim() || cleared)
  if (mode === 'create') set('prefix', form.prefix.trim() || undefined)
  set('externalId', form.externalId.trim() || cleared)
  const meta = parseJsonObject(form.meta)
  if (meta.problem) problems.meta = meta.problem
  set('meta', meta.value ?? cleared)
  const expires = fromLocalInput(form.expires)
  if (form.expires && expires === undefined) problems.expires = 'not a date and time'
  set('expires', expires ?? cleared)
  const remaining = number('remaining', form.remaining)
  set('remaining', remaining ?? cleared)
  if (form.refillInterval) {
    const amount = number('refillAmount', form.refillAmount)
    if (amount === undefined && !problems.refillAmount) problems.refillAmount = 'a refill needs an amount'
    if (remaining === undefined && !problems.remaining) problems.remaining = 'a refill needs credits to refill'
    const refillDay = form.refillInterval === 'monthly' ? number('refillDay', form.refillDay) : undefined
    set('refill', { interval: form.refillInterval, amount, ...(refillDay === undefined ? {} : { refillDay }) })
  } else set('refill', cleared)
  const limit = number('ratelimitLimit', form.ratelimitLimit)
  if (limit !== undefined) {
    const duration = number('ratelimitDuration', form.ratelimitDuration)
    if (duration === undefined && !problems.ratelimitDuration)
      problems.ratelimitDuration = 'a rate limit needs a window'
    set('ratelimit', { limit, duration, async: form.ratelimitAsync })
  } else set('ratelimit', cleared)
  const roles = splitList(form.roles)
  const permissions = splitList(form.permissions)
  if (mode === 'create') {
    if (roles.length) body.roles = roles
    if (permissions.length) body.permissions = permissions
  } else {
    body.roles = roles
    body.permissions = permissions
  }
  body.enabled = form.enabled
  return { body, problems }
}

/**
 * keys.updateKey's body for an edit: only the fields the admin changed from the key as the form was filled with it.
 * Sending the rest back would undo what happened meanwhile (a key disabled since), cut what the form shows coarser
 * (an expiry's seconds) and ask for rights the change does not need (roles sent unchanged need the rbac actions).
 */
export function changesOf(
  loaded: KeyForm,
  form: KeyForm,
): { body: Record<string, unknown>; problems: KeyFormProblems } {
  const before = bodyOf(loaded, 'update').body
  const { body: after, problems } = bodyOf(form, 'update')
  const changed = Object.entries(after).filter(([field, value]) => !sameValue(value, before[field]))
  return { body: Object.fromEntries(changed), problems }
}

/** Field values as bodyOf makes them (JSON: text, numbers, lists, objects in a fixed key order). */
const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)
