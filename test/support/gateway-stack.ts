import { expect } from 'vitest'
import { startEchoUpstream, type EchoUpstream } from './echo-upstream.js'
import { jsonPoster, startKeygate, type KeygateProcess } from './processes.js'
import { startRedisServer, type RedisServer } from './redis-server.js'

const ROOT_KEY = 'gateway-test-root-key-0123456789'
const post = jsonPoster(ROOT_KEY)

export interface IssuedKey {
  keyId: string
  key: string
}

/**
 * What a real gateway is tested against: Redis, a control plane, a verifier started without --api-id (the
 * gateway names the api, as docs/gateways.md's configurations do), an echo upstream standing in for the API, an api
 * with a key (owner `acme`) and another api with a key of its own.
 */
export interface GatewayStack {
  redis: RedisServer
  controlPlane: KeygateProcess
  verifier: KeygateProcess
  upstream: EchoUpstream
  apiId: string
  otherApiId: string
  key: IssuedKey
  otherApiKey: IssuedKey
  /** A management call that must answer 200. */
  admin: (path: string, body: unknown) => Promise<Record<string, any>>
  /** A key of the api, with createKey's fields. */
  newKey: (fields?: Record<string, unknown>) => Promise<IssuedKey>
  stop(): Promise<void>
}

export async function startGatewayStack(): Promise<GatewayStack> {
  const redis = await startRedisServer()
  const env = { REDIS_URL: redis.url, LOG_LEVEL: 'warn' }
  const controlPlane = await startKeygate(['control-plane'], { ...env, KEYGATE_ROOT_KEY: ROOT_KEY })
  const verifier = await startKeygate(['verifier'], env)
  const upstream = await startEchoUpstream()
  const admin = async (path: string, body: unknown) => {
    const response = await post(controlPlane.url, path, body)
    expect(response.status, `${path}: ${JSON.stringify(response.body)}`).toBe(200)
    return response.body
  }
  const apiId = (await admin('apis.createApi', { name: 'behind-a-gateway' })).apiId as string
  const otherApiId = (await admin('apis.createApi', { name: 'other' })).apiId as string
  const newKey = async (fields: Record<string, unknown> = {}) =>
    (await admin('keys.createKey', { apiId, ...fields })) as IssuedKey
  return {
    redis,
    controlPlane,
    verifier,
    upstream,
    apiId,
    otherApiId,
    key: await newKey({ externalId: 'acme' }),
    otherApiKey: (await admin('keys.createKey', { apiId: otherApiId })) as IssuedKey,
    admin,
    newKey,
    async stop() {
      await upstream.stop()
      await verifier.stop()
      await controlPlane.stop()
      await redis.stop()
    },
  }
}
