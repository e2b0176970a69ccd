import {
  LIMIT_DOC,
  LimitBody,
  limitAnswerOf,
  limitRequestOf,
  LimitResponse,
} from '../../shared/ratelimits/limit-contract.js'
import { v1Route } from '../http/management-route.js'
import { limit } from './limit.js'

/**
 * v1's ratelimits.limit on the control plane: a root key is needed here (the verifier's takes none). Its contract
 * (body, answer, the reference's text) is shared/ratelimits/limit-contract.ts.
 */
export const limitV1 = v1Route({
  operation: 'ratelimits.limit',
  method: 'POST',
  doc: LIMIT_DOC,
  input: LimitBody,
  answer: LimitResponse,
  handle: async (body, caller, deps) => limitAnswerOf(await limit(deps, caller, limitRequestOf(body))),
})
