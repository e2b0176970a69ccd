import { spawn } from 'node:child_process'

/**
 * Runs a redis-cli command to its end: its exit code and what it printed. Never spawnSync: a test's own proxies (the
 * stranding proxy) forward in this process, and a blocked event loop would hold redis-cli up for ever.
 */
export function redisCli(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('redis-cli', args)
    let output = ''
    child.stdout.on('data', (chunk) => (output += String(chunk)))
    child.stderr.on('data', (chunk) => (output += String(chunk)))
    child.on('exit', (code) => resolve({ code, output }))
  })
}
