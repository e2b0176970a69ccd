import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { docBlock } from '../support/doc-blocks.js'
import { freePort } from '../support/free-port.js'
import { waitFor } from '../support/wait-for.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/**
 * docs/webhooks.md's receiver, saved and started as the page says (`receiver.mjs`, run by node with the secret in
 * KEYGATE_WEBHOOK_SECRET), answering a request signed with the secret and refusing one that is not.
 */
describe("docs/webhooks.md's receiver", () => {
  it('runs as the page says to save and start it, and verifies what it is sent', async () => {
    const page = readFileSync(join(ROOT, 'docs/webhooks.md'), 'utf8')
    expect(page).toContain('save it as `receiver.mjs`')
    expect(page).toContain('node receiver.mjs`')
    const port = await freePort()
    const block = docBlock('docs/webhooks.md', 'A receiver', 'js', [['.listen(8080)', `.listen(${port})`]])
    // Under the checkout, so that `standardwebhooks` resolves from its node_modules as from the user's.
    mkdirSync(join(ROOT, '.tmp'), { recursive: true })
    const dir = mkdtempSync(join(ROOT, '.tmp', 'receiver-'))
    writeFileSync(join(dir, 'receiver.mjs'), block)
    const secret = `whsec_${Buffer.from('a secret of thirty-two bytes....').toString('base64')}`
    const child = spawn(process.execPath, ['receiver.mjs'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', KEYGATE_WEBHOOK_SECRET: secret },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk) => (output += String(chunk)))
    child.stderr.on('data', (chunk) => (output += String(chunk)))
    const exited = new Promise((resolve) => child.once('exit', resolve))
    try {
      const body = JSON.stringify({
        type: 'key.updated',
        timestamp: new Date().toISOString(),
        data: { keyId: 'key_1' },
      })
      const send = (signedWith: string) => {
        const sentAt = new Date()
        const id = `msg_${sentAt.getTime()}`
        return fetch(`http://127.0.0.1:${port}/`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'webhook-id': id,
            'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
            'webhook-signature': new Webhook(signedWith).sign(id, sentAt, body),
          },
          body,
        })
      }
      const answer = await waitFor(
        () => {
          if (child.exitCode !== null) throw new Error(`the receiver exited: ${output}`)
          return send(secret)
        },
        'the receiver to answer',
        10_000,
        50,
      )
      expect(answer.status, output).toBe(204)
      await waitFor(() => output.includes('key.updated'), 'the receiver to print the event')
      const forged = await send(`whsec_${Buffer.from('another secret of 32 bytes......').toString('base64')}`)
      expect(forged.status).toBe(401)
    } finally {
      child.kill()
      await exited
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
