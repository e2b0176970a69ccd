/**
 * The index of every api by id (creation order), for apis.listApis. Like the keys' indexes it is a pointer written
 * before the record and removed after it, so a crash leaves an entry the listing skips, never an unlisted api.
 */
export const APIS_INDEX = 'apis'
