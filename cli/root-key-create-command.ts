import { rootKeyCreateConfig, type RootKeyCreateConfig } from '../shared/config/config.js'
import { newId } from '../shared/ids.js'
import { generateRootKey } from '../shared/key-material.js'
import { openRedis } from '../shared/store/redis-connection.js'
import { RedisKeyStore } from '../shared/store/redis-key-store.js'

/** Stores a new root key's hash in Redis and returns the key, to be printed once. */
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

/** `keygate root-key create`: the key on stdout (for `$(…)`), everything else on stderr. */
export async function run(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const config = rootKeyCreateConfig(argv, env)
  const { id, key } = await createRootKey(config)
  process.stderr.write(
    `Created root key ${id} with permissions ${config.permissions.join(',')}. It is shown only this once:\n`,
  )
  process.stdout.write(`${key}\n`)
  return 0
}
