import { useRedisServer } from '../support/redis-server.js'
import { controlPlaneSuite } from './control-plane.api.js'

const redis = useRedisServer()

controlPlaneSuite('Redis', () => redis.url)
