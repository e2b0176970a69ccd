import { Type } from 'typebox'

/** Unkey's page size for its v2 lists: at most, and by default. */
export const V2_PAGE = 100

/** The body of a v2 list (Unkey's `limit`, `cursor`, `search`): pages in id order, filtered by `search`. */
export const V2ListBody = (noun: string, searched: string) =>
  Type.Object(
    {
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: V2_PAGE, description: `At most this many ${noun} (default ${V2_PAGE})` }),
      ),
      cursor: Type.Optional(
        Type.String({ maxLength: 1024, description: "Where to go on from: the page before's `pagination.cursor`" }),
      ),
      search: Type.Optional(
        Type.String({
          maxLength: 256,
          description: `Only ${noun} whose ${searched} contains this (ignoring case)`,
        }),
      ),
    },
    { additionalProperties: false },
  )
