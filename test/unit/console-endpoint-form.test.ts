import { describe, expect, it } from 'vitest'
import {
  apiIdsText,
  changesOf,
  createBodyOf,
  EMPTY_ENDPOINT_FORM,
  eventTypesText,
  formOf,
  withEventType,
} from '../../console/src/pages/endpoint-form.js'
import { EVENT_TYPES } from '../../console/src/webhook-event-types.js'
import { WEBHOOK_EVENT_TYPES } from '../../shared/webhook.js'

/** The console's webhook endpoint form, turned into webhooks.createEndpoint and updateEndpoint bodies (no DOM). */
describe("the console's webhook endpoint form", () => {
  const endpoint = {
    endpointId: 'whep_1',
    url: 'https://hooks.example.com/keygate',
    description: 'billing',
    eventTypes: ['key.deleted', 'key.created'],
    apiIds: ['api_1', 'api_2'],
    enabled: true,
    createdAt: 1,
  }

  it('offers every event type the API takes, in its order: the console cannot import the list', () => {
    expect(EVENT_TYPES).toEqual(WEBHOOK_EVENT_TYPES)
  })

  it('creates with what was filled in only: no event type checked sends none, which means every type', () => {
    expect(createBodyOf({ url: ' https://a.example/h ', description: '  ', eventTypes: [], apiIds: ' , ' })).toEqual({
      url: 'https://a.example/h',
    })
    expect(
      createBodyOf({
        url: 'https://a.example/h',
        description: ' billing ',
        eventTypes: ['key.created'],
        apiIds: ' api_1,api_2  api_1, ',
      }),
    ).toEqual({
      url: 'https://a.example/h',
      description: 'billing',
      eventTypes: ['key.created'],
      apiIds: ['api_1', 'api_2'],
    })
    expect(eventTypesText([])).toBe('every type')
    expect(eventTypesText(['key.created', 'key.deleted'])).toBe('key.created, key.deleted')
    expect(apiIdsText([])).toBe('every api')
    expect(apiIdsText(['api_1', 'api_2'])).toBe('api_1, api_2')
  })

  it('keeps the checked types in the form’s order, each once, whatever order they were checked in', () => {
    let checked = withEventType(EMPTY_ENDPOINT_FORM.eventTypes, 'rootKey.revoked', true)
    checked = withEventType(checked, 'key.created', true)
    checked = withEventType(checked, 'key.created', true)
    expect(checked).toEqual(['key.created', 'rootKey.revoked'])
    expect(withEventType(checked, 'key.created', false)).toEqual(['rootKey.revoked'])
  })

  it('edits with the changed fields only: a cleared description is null, event types and apis go whole', () => {
    const loaded = formOf(endpoint)
    expect(loaded.eventTypes).toEqual(['key.created', 'key.deleted'])
    expect(loaded.apiIds).toBe('api_1, api_2')
    expect(changesOf(loaded, loaded)).toEqual({})
    // The same apis in another order are no change; none is every api.
    expect(changesOf(loaded, { ...loaded, apiIds: 'api_2 api_1' })).toEqual({})
    expect(changesOf(loaded, { ...loaded, apiIds: 'api_2' })).toEqual({ apiIds: ['api_2'] })
    expect(changesOf(loaded, { ...loaded, apiIds: '' })).toEqual({ apiIds: [] })
    // The same types in another order, and the URL with spaces around it, are no change.
    expect(
      changesOf(loaded, { ...loaded, url: ` ${loaded.url} `, eventTypes: ['key.deleted', 'key.created'] }),
    ).toEqual({})
    expect(changesOf(loaded, { ...loaded, description: '' })).toEqual({ description: null })
    expect(changesOf(loaded, { ...loaded, url: 'https://other.example/h' })).toEqual({ url: 'https://other.example/h' })
    expect(changesOf(loaded, { ...loaded, eventTypes: [] })).toEqual({ eventTypes: [] })
    expect(changesOf(loaded, { ...loaded, eventTypes: withEventType(loaded.eventTypes, 'key.updated', true) })).toEqual(
      {
        eventTypes: ['key.created', 'key.updated', 'key.deleted'],
      },
    )
  })

  it('keeps a type the console does not list when something else is edited', () => {
    const loaded = formOf({ ...endpoint, eventTypes: ['key.created', 'key.future'] })
    const edited = changesOf(loaded, { ...loaded, eventTypes: withEventType(loaded.eventTypes, 'key.deleted', true) })
    expect(edited).toEqual({ eventTypes: ['key.created', 'key.deleted', 'key.future'] })
  })
})
