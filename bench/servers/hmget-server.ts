import { createServer } from 'node:http'
import { Redis } from 'ioredis'
import { hashKey } from '../../shared/keys/key-material.js'
import { redisKeys } from '../../shared/store/redis/redis-keys.js'

/**
 * The cache-miss baseline: node:http, JSON.parse, the key's SHA-256 and one HMGET of its record on one ioredis
 * connection — the read keygate's miss path makes — answering whether it was found. No framework, no validation,
 * no rules, no metrics: what a server that reads Redis per request costs at least.
 */
const redis = new Redis(process.env.REDIS_URL!)
const FOUND = JSON.stringify({ valid: true })
const MISSING = JSON.stringify({ valid: false })

createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', () => {
    if (req.url === '/readyz') {
      res.writeHead(200, { 'content-length': 2 }).end('{}')
      return
    }
    const { key } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { key: string }
    const hash = hashKey(key)
    redis.hmget(redisKeys.record(hash), 'rev', 'doc', 'credits').then(
      ([rev, doc]) => {
        const body = rev !== null && doc !== null ? FOUND : MISSING
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
        res.end(body)
      },
      () => res.writeHead(503).end(),
    )
  })
}).listen(Number(process.env.PORT), '127.0.0.1')
process.on('SIGTERM', () => process.exit(0))
