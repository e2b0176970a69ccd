import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { V2Envelope } from '../../shared/http/v2-route.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'

export function registerLiveness(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.get(
    '/v1/liveness',
    {
      schema: {
        response: {
          200: Type.Object({
            status: Type.String({ description: '`ok`: the process answers' }),
            services: Type.Record(Type.String(), Type.String(), {
              description: 'What it runs on: `store` is `redis` or `memory`',
            }),
          }),
        },
      },
    },
    async () => ({ status: 'ok', services: { store: deps.store.kind } }),
  )
  // v2's: a GET in the envelope, no root key (Unkey's liveness is the one v2 operation that needs none).
  app.get(
    '/v2/liveness',
    {
      schema: {
        response: {
          200: V2Envelope(
            Type.Object(
              { message: Type.String({ description: '`OK`: the process answers' }) },
              { additionalProperties: false },
            ),
          ),
        },
      },
    },
    async (request) => ({ meta: { requestId: request.id }, data: { message: 'OK' } }),
  )
}
