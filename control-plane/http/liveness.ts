import { Type } from 'typebox'
import type { Route } from '../../shared/http/route.js'
import { V2Envelope } from '../../shared/http/v2-route.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'

/** v1's liveness: whether the process answers, and which store it runs on. No root key. */
const livenessV1: Route<ControlPlaneDeps> = {
  id: 'liveness',
  method: 'GET',
  url: '/v1/liveness',
  doc: {
    summary: 'Whether the service is up, and which store it runs on',
    rootKey: false,
    tag: 'health',
    errors: [],
  },
  response: Type.Object({
    status: Type.String({ description: '`ok`: the process answers' }),
    services: Type.Record(Type.String(), Type.String(), {
      description: 'What it runs on: `store` is `redis` or `memory`',
    }),
  }),
  handle: (_input, _caller, deps) => ({ status: 'ok', services: { store: deps.store.kind } }),
}

/** v2's: a GET in the envelope, no root key (Unkey's liveness is the one v2 operation that needs none). */
const livenessV2: Route<ControlPlaneDeps> = {
  id: 'v2.liveness',
  method: 'GET',
  url: '/v2/liveness',
  doc: {
    summary: 'Whether the service is up (the one v2 operation without a root key)',
    rootKey: false,
    tag: 'v2 health',
    errors: [],
  },
  response: V2Envelope(
    Type.Object(
      { message: Type.String({ description: '`OK`: the process answers' }) },
      { additionalProperties: false },
    ),
  ),
  handle: () => ({ data: { message: 'OK' } }),
}

export const LIVENESS_ROUTES = [livenessV1, livenessV2] as const
