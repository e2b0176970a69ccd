import type { WebhookEndpoint } from '../types.js'
import { EVENT_TYPES } from '../webhook-event-types.js'

/**
 * A webhook endpoint's form, as typed (browser-free, so that tests read it in Node): the URL, description and api ids
 * as text, the event types checked, in the form's order. None checked means every type, no api every api: the API's
 * empty lists.
 */
export interface EndpointForm {
  url: string
  description: string
  eventTypes: string[]
  /** Api ids, separated by commas or white space. */
  apiIds: string
}

export const EMPTY_ENDPOINT_FORM: EndpointForm = { url: '', description: '', eventTypes: [], apiIds: '' }

/** The api ids typed, each once, in the order typed. */
export function apiIdsOf(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter(Boolean))]
}

/** webhooks.createEndpoint's body: an empty description is left out, and so are event types and apis when none. */
export function createBodyOf(form: EndpointForm): {
  url: string
  description?: string
  eventTypes?: string[]
  apiIds?: string[]
} {
  const description = form.description.trim()
  const apiIds = apiIdsOf(form.apiIds)
  return {
    url: form.url.trim(),
    ...(description ? { description } : {}),
    ...(form.eventTypes.length ? { eventTypes: form.eventTypes } : {}),
    ...(apiIds.length ? { apiIds } : {}),
  }
}

/** The form filled from an endpoint, to edit it. */
export function formOf(endpoint: WebhookEndpoint): EndpointForm {
  return {
    url: endpoint.url,
    description: endpoint.description ?? '',
    eventTypes: inFormOrder(endpoint.eventTypes),
    apiIds: endpoint.apiIds.join(', '),
  }
}

/**
 * webhooks.updateEndpoint's fields the admin changed, compared with the form as it was filled: a description
 * cleared is null, event types and apis are sent whole (none: every one). Only changes are sent, so that a change
 * made meanwhile elsewhere (the endpoint disabled from its page) is not undone, and an unchanged URL is not judged
 * again.
 */
export function changesOf(
  loaded: EndpointForm,
  form: EndpointForm,
): { url?: string; description?: string | null; eventTypes?: string[]; apiIds?: string[] } {
  const url = form.url.trim()
  const description = form.description.trim()
  const apiIds = apiIdsOf(form.apiIds)
  return {
    ...(url === loaded.url.trim() ? {} : { url }),
    ...(description === loaded.description.trim() ? {} : { description: description || null }),
    ...(sameMembers(form.eventTypes, loaded.eventTypes) ? {} : { eventTypes: form.eventTypes }),
    ...(sameMembers(apiIds, apiIdsOf(loaded.apiIds)) ? {} : { apiIds }),
  }
}

/** The event types checked once `type` is checked or not, in the form's order whatever order they were checked in. */
export function withEventType(checked: readonly string[], type: string, on: boolean): string[] {
  return inFormOrder(on ? [...checked, type] : checked.filter((other) => other !== type))
}

/** An endpoint's event types at a glance. */
export function eventTypesText(eventTypes: readonly string[]): string {
  return eventTypes.length === 0 ? 'every type' : eventTypes.join(', ')
}

/** The apis an endpoint is scoped to, at a glance. */
export function apiIdsText(apiIds: readonly string[]): string {
  return apiIds.length === 0 ? 'every api' : apiIds.join(', ')
}

/**
 * Types in the form's order, each once. A type the console does not list (a newer server) is kept last, so that an
 * edit of something else leaves it subscribed.
 */
function inFormOrder(types: readonly string[]): string[] {
  const known: readonly string[] = EVENT_TYPES
  return [
    ...new Set([...known.filter((type) => types.includes(type)), ...types.filter((type) => !known.includes(type))]),
  ]
}

function sameMembers(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((member) => b.includes(member))
}
