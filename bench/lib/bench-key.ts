/**
 * What every bench key carries besides its id: a name, an owner and meta, as real keys do. The fields are what a
 * verdict echoes (and what a slow serialisation path pays for), so the ceiling answers a verdict of this shape too.
 */
export const BENCH_KEY_FIELDS = {
  name: 'acme checkout service',
  ownerId: 'acme-corp',
  meta: { plan: 'pro', region: 'eu-west-1', seats: 25 },
} as const

/** The keyId the ceiling answers for every key (its verdict is a constant): how a bench tells it from keygate. */
export const CEILING_KEY_ID = 'key_3ZtWQ4dJ8Fq1Xy9aBcDeFg'
