import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync, readFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './free-port.js'
import { waitFor } from './wait-for.js'

const INSTALL_HINT =
  'nginx was not found. The forward-auth end-to-end test runs a real nginx with auth_request.\n' +
  'Install it with: sudo apt-get install -y nginx-light   (npm test does it as root: test/support/system-tools.mjs)'

export interface Nginx {
  url: string
  stop(): Promise<void>
  errorLog(): string
}

function nginxBinary(): string {
  for (const candidate of ['/usr/sbin/nginx', 'nginx']) {
    if (!spawnSync(candidate, ['-v']).error) return candidate
  }
  throw new Error(INSTALL_HINT)
}

/**
 * Runs nginx in the foreground on a free port with `serverBlock` (which may use {{port}}) inside http {}.
 * Everything it writes stays in a temp dir. `commandPrefix` (e.g. taskset -c 0) runs it under another command.
 */
export async function startNginx(
  serverBlock: (port: number) => string,
  options: { commandPrefix?: string[] } = {},
): Promise<Nginx> {
  const binary = nginxBinary()
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'keygate-nginx-'))
  const conf = join(dir, 'nginx.conf')
  writeFileSync(
    conf,
    `
daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
${serverBlock(port)}
}
`,
  )
  const [command, ...args] = [
    ...(options.commandPrefix ?? []),
    binary,
    '-p',
    dir,
    '-c',
    conf,
    '-e',
    join(dir, 'error.log'),
  ]
  const child: ChildProcess = spawn(command, args, { stdio: 'ignore' })
  const errorLog = () => (existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '')
  const url = `http://127.0.0.1:${port}`
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}: ${errorLog()}`)
      return (await fetch(`${url}/__nginx_up`).catch(() => undefined)) !== undefined
    },
    'nginx to listen',
    10_000,
    25,
  )
  return {
    url,
    errorLog,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGQUIT')
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
