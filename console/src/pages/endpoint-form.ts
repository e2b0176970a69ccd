import type { WebhookEndpoint } from '../types.js'
import { EVENT_TYPES } from '../webhook-event-types.js'

/**
 * A webhook endpoint's form, as typed (browser-free, so that tests read it in Node): the URL and description as text,
 * the event types checked, in the form's order. None checked means every type: the API's empty list.
 */
export interface EndpointForm {
  url: string
  description: string
  eventTypes: string[]
}

export const EMPTY_ENDPOINT_FORM: EndpointForm = { url: '', description: '', eventTypes: [] }

/** webhooks.createEndpoint's body: an empty description is left out, and so are event types when none is checked. */
export function createBodyOf(form: EndpointForm): { url: string; description?: string; eventTypes?: string[] } {
  const description = form.description.trim()
  return {
    url: form.url.trim(),
    ...(description ? { description } : {}),
    ...(form.eventTypes.length ? { eventTypes: form.eventTypes } : {}),
  }
}

/** The form filled from an endpoint, to edit it. */
export function formOf(endpoint: WebhookEndpoint): EndpointForm {
  return { url: endpoint.url, description: endpoint.description ?? '', eventTypes: inFormOrder(endpoint.eventTypes) }
}

/**
 * webhooks.updateEndpoint's fields the admin changed, compared with the form as it was filled: a description
 * cleared is null, event types are sent whole. Only changes are sent, so that a change made meanwhile elsewhere (the
 * endpoint disabled from its page) is not undone, and an unchanged URL is not judged again.
 */
export function changesOf(
  loaded: EndpointForm,
  form: EndpointForm,
): { url?: string; description?: string | null; eventTypes?: string[] } {
  const url = form.url.trim()
  const description = form.description.trim()
  return {
    ...(url === loaded.url.trim() ? {} : { url }),
    ...(description === loaded.description.trim() ? {} : { description: description || null }),
    ...(sameTypes(form.eventTypes, loaded.eventTypes) ? {} : { eventTypes: form.eventTypes }),
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

function sameTypes(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((type) => b.includes(type))
}
