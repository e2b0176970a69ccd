import { afterAll, beforeAll } from 'vitest'
import { startRedisServer, type RedisServer, type RedisServerOptions } from './redis-process.js'

export { startRedisServer, type RedisServer, type RedisServerOptions }

/**
 * One redis-server for a test file: started before its tests, stopped after. Read `url`/`admin`/`port`
 * inside tests and hooks (they exist once the server has started).
 */
export function useRedisServer(options: RedisServerOptions = {}): Pick<RedisServer, 'url' | 'admin' | 'port'> {
  let server: RedisServer | undefined
  beforeAll(async () => {
    server = await startRedisServer(options)
  })
  afterAll(async () => {
    await server?.stop()
  })
  const started = () => {
    if (!server) throw new Error('redis-server is not started yet: use it inside tests or hooks')
    return server
  }
  return {
    get url() {
      return started().url
    },
    get admin() {
      return started().admin
    },
    get port() {
      return started().port
    },
  }
}
