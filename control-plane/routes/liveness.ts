import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
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
}
