import type { RootKeyCreateConfig } from '../shared/config/config.js'
import { newId } from '../shared/ids.js'
import { generateRootKey } from '../shared/key-material.js'
import { openRedis } from '../shared/store/redis-connection.js'
import { RedisKeyStore } from '../shared/store/redis-key-store.js'

/** `keygate root-key create`: stores a new root key's hash in Redis and returns the key, to be printed once. */
export async function createRootKey(config: RootKeyCreateConfig): Promise<{ id: string; key: string }> {
  const store = new RedisKeyStore(await openRedis(config.redisUrl, 'root-key-create'))
  try {
    const { key, hash } = generateRootKey()
    const id = newId('root')
    await store.createRootKey({ id, hash, name: config.name, permissions: config.permissions, createdAt: Date.now() })
    return { id, key }
  } finally {
    await store.close()
  }
}
