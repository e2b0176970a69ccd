import { afterAll, beforeAll } from 'vitest'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { controlPlaneSuite } from './control-plane.api.js'

let redis: RedisServer
beforeAll(async () => {
  redis = await startRedisServer()
})
afterAll(async () => {
  await redis.stop()
})

controlPlaneSuite('Redis', () => redis.url)
