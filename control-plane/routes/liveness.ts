import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'

export function registerLiveness(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.get(
    '/v1/liveness',
    {
      schema: {
        response: { 200: Type.Object({ status: Type.String(), services: Type.Record(Type.String(), Type.String()) }) },
      },
    },
    async () => ({ status: 'ok', services: { store: deps.store.kind } }),
  )
}
