import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { docBlock } from '../support/doc-blocks.js'
import { freePort } from '../support/free-port.js'
import { newReportSigner, signedHeaders, startKeySetServer, type KeySetServer } from '../support/secret-scanning.js'
import { keygateStack } from '../support/keygate-stack.js'
import { jsonPoster, startKeygate, type KeygateProcess } from '../support/processes.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

const ROOT_KEY = 'leak-report-root-key-0123456789'
const MAX_STALENESS_MS = 2_000
const post = jsonPoster(ROOT_KEY)
const redis = useRedisServer()
const startStack = keygateStack()
let keySet: KeySetServer | undefined
afterAll(async () => {
  await keySet?.close()
})

/**
 * GitHub's secret scanning end to end, on real processes: a control plane trusting the keys a local stand-in for
 * GitHub publishes, and two verifiers. A signed report disables the key on both within the revocation bound; a
 * tampered, an unknown-key and a replayed report change nothing.
 */
describe('a leak report from GitHub, on a control plane and two verifiers', () => {
  it('disables the key everywhere within the bound, and refuses tampered, unknown-key and replayed reports', async () => {
    const signer = newReportSigner('github-e2e-key')
    keySet = await startKeySetServer([signer])
    const { controlPlane, verifiers } = await startStack({
      redisUrl: redis.url,
      rootKey: ROOT_KEY,
      maxStalenessMs: MAX_STALENESS_MS,
      controlPlane: { SECRET_SCANNING_KEYS_URL: keySet.url },
      verifiers: [{}, {}],
    })
    const { body: api } = await post(controlPlane.url, 'apis.createApi', { name: 'public repo' })
    const { body: leaked } = await post(controlPlane.url, 'keys.createKey', { apiId: api.apiId })
    const { body: bystander } = await post(controlPlane.url, 'keys.createKey', { apiId: api.apiId })
    const code = async (verifier: KeygateProcess, key: string) =>
      (await post(verifier.url, 'keys.verifyKey', { key }, false)).body.code as string
    for (const verifier of verifiers) expect(await code(verifier, leaked.key)).toBe('VALID')

    const send = async (body: string, headers: Record<string, string>) => {
      const answer = await fetch(`${controlPlane.url}/v1/secret-scanning/github`, { method: 'POST', headers, body })
      return { status: answer.status, body: (await answer.json()) as any }
    }
    const report = JSON.stringify([
      { token: leaked.key, type: 'keygate_key', url: 'https://github.com/o/r/blob/main/.env', source: 'content' },
    ])
    // Refused before anything is done: a body other than the one signed, and a key GitHub does not publish.
    const tampered = report.replace('.env', '.env.example')
    expect((await send(tampered, signedHeaders(signer, report))).status).toBe(401)
    const stranger = newReportSigner('not-published')
    expect((await send(report, signedHeaders(stranger, report))).status).toBe(401)
    for (const verifier of verifiers) expect(await code(verifier, leaked.key)).toBe('VALID')

    const sentAt = Date.now()
    const accepted = await send(report, signedHeaders(signer, report))
    const answeredAt = Date.now()
    expect(accepted.status).toBe(200)
    expect(accepted.body).toEqual([
      { token_hash: expect.any(String), token_type: 'keygate_key', label: 'true_positive' },
    ])
    // Every verifier refuses it from within the bound of the answer, and keeps refusing it.
    for (const [i, verifier] of verifiers.entries()) {
      const refusedAt = await waitFor(
        async () => ((await code(verifier, leaked.key)) === 'DISABLED' ? Date.now() : undefined),
        `verifier ${i} to refuse the leaked key`,
        answeredAt + MAX_STALENESS_MS + 1_000 - Date.now(),
        20,
      ).catch(() => undefined)
      expect(refusedAt, `verifier ${i} refuses the leaked key`).toBeDefined()
      expect(refusedAt! - answeredAt).toBeLessThanOrEqual(MAX_STALENESS_MS)
      console.log(`leak report: verifier ${i} refused the key ${refusedAt! - sentAt} ms after the report was sent`)
      expect(await code(verifier, bystander.key)).toBe('VALID')
    }

    // Re-enabled by its owner, the key is not disabled again by the same report sent again.
    await post(controlPlane.url, 'keys.updateKey', { keyId: leaked.keyId, enabled: true })
    expect((await send(report, signedHeaders(signer, report))).status).toBe(409)
    const { body: record } = await fetch(`${controlPlane.url}/v1/keys.getKey?keyId=${leaked.keyId}`, {
      headers: { authorization: `Bearer ${ROOT_KEY}` },
    }).then(async (answer) => ({ body: (await answer.json()) as any }))
    expect(record).toMatchObject({
      enabled: true,
      leaked: { reporter: 'github', action: 'disable', source: 'content' },
    })
  }, 60_000)

  it("runs docs/leaked-keys.md's local try as it is there: the signed report disables the key", async () => {
    const port = await freePort()
    const dev = await startKeygate(['dev'], { SECRET_SCANNING_KEYS_URL: `http://127.0.0.1:${port}/` })
    const dir = mkdtempSync(join(tmpdir(), 'keygate-leak-try-'))
    try {
      const rootKey = /ROOT_KEY=(\S+)/.exec(dev.output())?.[1]
      expect(rootKey).toMatch(/^kgroot_/)
      const block = docBlock('docs/leaked-keys.md', 'Trying it locally', 'sh', [['8787', String(port)]])
      const shell = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', block], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', KG: dev.url, ROOT_KEY: rootKey },
        encoding: 'utf8',
        timeout: 30_000,
      })
      expect(shell.status, shell.stdout + shell.stderr).toBe(0)
      const [report, verdict] = shell.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line))
      expect(report).toEqual([
        { token_hash: expect.any(String), token_type: 'keygate_api_key', label: 'true_positive' },
      ])
      expect(verdict).toMatchObject({ valid: false, code: 'DISABLED' })
    } finally {
      await dev.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
