import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import {
  expectAccessible,
  launchChromium,
  screenshotPath,
  usageSummary,
  waitForIngested,
  watchProblems,
} from '../support/console-browser.js'
import { runKeygate, startKeygate, type KeygateProcess } from '../support/processes.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'

/** What the chart check reads of a canvas (this project's type checking has no DOM library). */
interface Canvas2d {
  width: number
  height: number
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): ImageDataLike } | null
}
interface ImageDataLike {
  data: ArrayLike<number>
  width: number
  height: number
}

/**
 * The admin console in real Chromium, driven as an admin would: by its accessible names (the contract),
 * against `keygate dev` and against a control plane on Redis with a separate verifier process. Every page is held
 * to axe-core (no serious or critical violation); the screenshots docs/console.md shows are taken here
 * (`npm run docs:screenshots`).
 */

let browser: Browser

beforeAll(async () => {
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
})

/** Where the console is served, where keys are verified, and a root key with `*`. */
interface Target {
  consoleUrl: string
  verifierUrl: string
  rootKey: string
  /** The store, when it is a Redis another process can share. */
  redisUrl?: string
  stop(): Promise<void>
}

/** Webhooks go to a receiver on this machine: the processes allow private addresses, as a self-hoster would. */
const WEBHOOKS_HERE = { WEBHOOK_ALLOW_PRIVATE: 'true' }

async function devTarget(): Promise<Target> {
  const dev = await startKeygate(['dev'], { LOG_LEVEL: 'warn', ...WEBHOOKS_HERE })
  const rootKey = /root key: (\S+)/.exec(dev.output())![1]!
  expect(dev.output()).toContain(`console:  ${dev.url}/console`)
  return { consoleUrl: dev.url, verifierUrl: dev.url, rootKey, stop: async () => void (await dev.stop()) }
}

async function redisTarget(): Promise<Target> {
  const redis: RedisServer = await startRedisServer()
  const created = await runKeygate(['root-key', 'create', '--permissions', '*', '--redis', redis.url])
  expect(created.code, created.stderr).toBe(0)
  const processes: KeygateProcess[] = []
  try {
    processes.push(await startKeygate(['control-plane', '--redis', redis.url], { LOG_LEVEL: 'warn', ...WEBHOOKS_HERE }))
    processes.push(await startKeygate(['verifier'], { REDIS_URL: redis.url, LOG_LEVEL: 'warn' }))
  } catch (err) {
    for (const process of processes) await process.stop()
    await redis.stop()
    throw err
  }
  const [controlPlane, verifier] = processes as [KeygateProcess, KeygateProcess]
  return {
    consoleUrl: controlPlane.url,
    verifierUrl: verifier.url,
    rootKey: created.stdout.trim(),
    redisUrl: redis.url,
    stop: async () => {
      await verifier.stop()
      await controlPlane.stop()
      await redis.stop()
    },
  }
}

/** A management call with the target's root key, as a script would make it; its answer (200 expected). */
async function admin(target: Target, operation: string, body?: object): Promise<Record<string, any>> {
  const answer = await fetch(`${target.consoleUrl}/v1/${operation}`, {
    method: body ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${target.rootKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  expect(answer.status, await answer.clone().text()).toBe(200)
  return (await answer.json()) as Record<string, any>
}

async function verify(target: Target, key: string): Promise<{ valid: boolean; code: string }> {
  const answer = await fetch(`${target.verifierUrl}/v1/keys.verifyKey`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key }),
  })
  return (await answer.json()) as { valid: boolean; code: string }
}

/** A fresh browser context (its own sessionStorage) allowed to use the clipboard on the console's origin. */
async function newContext(target: Target): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: target.consoleUrl })
  return context
}

/** Signs in where the console opens: its overview. */
async function signIn(page: Page, target: Target, rootKey = target.rootKey): Promise<void> {
  await page.goto(`${target.consoleUrl}/console`)
  await page.getByLabel('Root key').fill(rootKey)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
}

/** Opens a section from the header, as an admin would, and waits for its heading. */
async function open(page: Page, link: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: link }).click()
  await page.getByRole('heading', { level: 1, name: link }).waitFor()
}

const flows = [
  ['keygate dev', devTarget],
  ['a control plane on Redis and a separate verifier', redisTarget],
] as const

for (const [name, start] of flows) {
  describe(`the console against ${name}`, () => {
    let target: Target
    beforeAll(async () => {
      target = await start()
    }, 60_000)
    afterAll(async () => {
      await target?.stop()
    })

    it('runs the admin flow: sign in, overview, api, key (copied), verify, disable → denied, chart, reroll, delete, audit', async () => {
      const context = await newContext(target)
      const page = await context.newPage()
      const problems = watchProblems(page)
      await page.goto(`${target.consoleUrl}/console`)
      await expectAccessible(page, 'sign-in')
      await signIn(page, target)
      await usageSummary(page)
      await expectAccessible(page, 'overview')
      await open(page, 'Apis')
      await expectAccessible(page, 'apis')

      const apiName = `checkout ${name}`
      await page.getByLabel('Name', { exact: true }).fill(apiName)
      await page.getByRole('button', { name: 'Create API' }).click()
      await page.getByRole('link', { name: apiName }).click()
      await page.getByRole('heading', { level: 1, name: `Keys of ${apiName}` }).waitFor()
      const apiId = /#\/apis\/(api_\w+)/.exec(page.url())![1]!
      await expectAccessible(page, 'keys of an api')

      await page.getByLabel('Name', { exact: true }).fill('acme checkout')
      await page.getByLabel('Owner (externalId)').fill('acme')
      await page.getByLabel('Meta (JSON object)').fill('{"plan": "pro"}')
      await page.getByRole('button', { name: 'Create key' }).click()
      const shown = page.getByLabel('New key', { exact: true })
      const key = await shown.inputValue()
      expect(key).toMatch(/^[1-9A-HJ-NP-Za-km-z]{16,}_[1-9A-HJ-NP-Za-km-z]{6}$/)
      await expect.poll(() => page.getByText('the only time it is shown').count()).toBe(1)
      await page.getByRole('button', { name: 'Copy new key' }).click()
      await page.getByText('Copied to the clipboard.').waitFor()
      expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(key)
      await expectAccessible(page, 'a new key shown once')

      // Every verification of the key is recorded: counted here, to know when the engine has them all.
      let verifications = 0
      const verifyCounted = (secret: string) => {
        verifications++
        return verify(target, secret)
      }
      for (let i = 0; i < 3; i++) expect(await verifyCounted(key)).toMatchObject({ valid: true, code: 'VALID' })

      await page.getByRole('link', { name: /^Open key key_/ }).click()
      await page.getByRole('heading', { level: 1, name: 'Key acme checkout' }).waitFor()
      const keyId = /#\/keys\/(key_\w+)/.exec(page.url())![1]!
      await page.getByRole('button', { name: 'Disable key' }).click()
      await page.getByRole('button', { name: 'Enable key' }).waitFor()
      await waitFor(async () => (await verifyCounted(key)).code === 'DISABLED', 'the verifier to deny the key', 10_000)
      expect(await verifyCounted(key)).toMatchObject({ valid: false, code: 'DISABLED' })

      // The chart reads the analytics engine when drawn, and again on Refresh: once the engine has every verification.
      await waitForIngested(target.consoleUrl, target.rootKey, apiId, verifications)
      await page.getByRole('button', { name: 'Refresh' }).click()
      await expect.poll(() => usageSummary(page)).toMatch(/^Last 24 hours: 3 valid, \d+ disabled$/)
      await expect.poll(() => page.locator('.usage canvas').count()).toBeGreaterThan(0)
      // The words above come from the counts; the drawing must too. The Valid line (#166534) rises to 3 of the y
      // scale's 4 in the last hour: its pixels span most of the plot's height. Drawn at 0, they would lie on one row.
      const validRows = await page.locator('.usage canvas').evaluate((element) => {
        const canvas = element as unknown as Canvas2d
        const { data, width, height } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height)
        const rows = new Set<number>()
        // The leftmost x of the pixels on each row: where the line peaks.
        const left = new Map<number, number>()
        for (let y = 0; y < height; y++)
          for (let x = 0; x < width; x++) {
            const at = (y * width + x) * 4
            const near = (i: number, value: number) => Math.abs(data[at + i]! - value) <= 24
            if (data[at + 3]! > 200 && near(0, 0x16) && near(1, 0x65) && near(2, 0x34)) {
              rows.add(y)
              if (!left.has(y)) left.set(y, x)
            }
          }
        const top = Math.min(...rows)
        const peakLeft = Math.min(...[0, 1, 2].map((below) => left.get(top + below) ?? width))
        return { top, bottom: Math.max(...rows), height, peakLeft, width }
      })
      expect(validRows.bottom - validRows.top).toBeGreaterThan(validRows.height / 3)
      // And the peak is where the verifications were: in the last hour (or the one before, if they straddled an hour),
      // at the right edge. Counts put in the wrong hours (bucketsOf by index, not by time) peaked at the left, passed.
      expect(validRows.peakLeft).toBeGreaterThan(validRows.width * 0.8)
      await expectAccessible(page, "a key's page")
      if (name === 'keygate dev') {
        await page.locator('section.usage').screenshot({ path: screenshotPath('console-key-chart.png') })
      }

      await page.getByRole('button', { name: 'Enable key' }).click()
      await page.getByRole('button', { name: 'Disable key' }).waitFor()
      await page.getByRole('button', { name: 'Reroll key' }).click()
      await page.getByLabel('The old key keeps working').selectOption('0')
      await page.getByRole('button', { name: 'Reroll now' }).click()
      const rerolled = await page.getByLabel('New key', { exact: true }).inputValue()
      expect(rerolled).not.toBe(key)
      await waitFor(async () => (await verify(target, rerolled)).valid, 'the rerolled key to verify', 10_000)
      await waitFor(async () => !(await verify(target, key)).valid, 'the old key to stop verifying', 10_000)

      await page.getByRole('link', { name: /^Open the new key key_/ }).click()
      const newKeyId = /#\/keys\/(key_\w+)/.exec(page.url())![1]!
      expect(newKeyId).not.toBe(keyId)
      await page.getByRole('button', { name: 'Delete key' }).click()
      const dialog = page.getByRole('dialog')
      await expectAccessible(page, 'the delete dialog')
      await dialog.getByRole('button', { name: 'Delete key' }).click()
      await page.getByRole('heading', { level: 1, name: `Keys of ${apiName}` }).waitFor()
      await waitFor(
        async () => (await verify(target, rerolled)).code === 'NOT_FOUND',
        'the deleted key to be gone',
        10_000,
      )

      await page.getByRole('link', { name: 'Audit log' }).click()
      await page.getByLabel('Api id').fill(apiId)
      await page.getByRole('button', { name: 'Filter' }).click()
      const actions = page.locator('table.audit tbody tr td:nth-child(2)')
      await expect
        .poll(() => actions.allInnerTexts())
        .toEqual([
          'keys.deleteKey',
          'keys.rerollKey',
          'keys.updateKey',
          'keys.updateKey',
          'keys.createKey',
          'apis.createApi',
        ])
      await expectAccessible(page, 'the audit log')
      expect(problems).toEqual([])
      expect(page.url()).not.toContain(target.rootKey)
      await context.close()
    }, 120_000)

    it.runIf(name !== 'keygate dev')(
      'says on a second control plane that usage is served by the one running the engine, and works otherwise',
      async () => {
        // The first control plane runs the embedded engine; one started beside it on the same store ingests nothing and
        // answers analytics 412, once its first ingest pass has found the other holding the lease.
        const second = await startKeygate(['control-plane', '--redis', target.redisUrl!], { LOG_LEVEL: 'warn' })
        onTestFinished(async () => void (await second.stop()))
        await waitFor(() => second.output().includes('serves no analytics'), 'the second to refuse to ingest', 30_000)
        const { apiId } = await admin(target, 'apis.createApi', { name: 'second control plane' })
        const { keyId } = await admin(target, 'keys.createKey', { apiId, name: 'seen from the second' })
        const context = await newContext(target)
        const page = await context.newPage()
        const problems = watchProblems(page)
        await signIn(page, { ...target, consoleUrl: second.url })
        const unavailable = page.getByTestId('usage-unavailable')
        const said =
          'Usage is not shown: this control plane serves no analytics (Analytics are served by the control plane ' +
          'that runs the embedded engine, not by this one).'
        await expect.poll(() => unavailable.innerText()).toBe(said)
        await expectAccessible(page, 'the overview without analytics')
        await page.goto(`${second.url}/console#/keys/${keyId}`)
        await page.getByRole('heading', { level: 1, name: 'Key seen from the second' }).waitFor()
        await expect.poll(() => unavailable.innerText()).toBe(said)
        expect(await page.getByRole('alert').count()).toBe(0)
        await open(page, 'Apis')
        await page.getByRole('link', { name: 'second control plane' }).waitFor()
        // The browser logs each 412 it was answered; nothing else went wrong.
        expect(problems.filter((problem) => !problem.includes('status of 412'))).toEqual([])
        await context.close()
      },
      60_000,
    )

    it('runs the webhook flow: endpoint created, its secret shown once signs deliveries and a test event, rotated, deleted', async () => {
      const receiver = await startWebhookReceiver()
      onTestFinished(() => receiver.stop())
      const context = await newContext(target)
      const page = await context.newPage()
      const problems = watchProblems(page)
      await signIn(page, target)
      await open(page, 'Webhooks')
      await expectAccessible(page, 'webhooks')

      await page.getByLabel('URL', { exact: true }).fill(receiver.url)
      await page.getByLabel('Description', { exact: true }).fill(`events of ${name}`)
      await page.getByRole('checkbox', { name: 'key.created', exact: true }).check()
      await page.getByRole('button', { name: 'Create endpoint' }).click()
      const secret = await page.getByLabel('Signing secret', { exact: true }).inputValue()
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      await expect.poll(() => page.getByText('the only time it is shown').count()).toBe(1)
      await page.getByRole('button', { name: 'Copy signing secret' }).click()
      await page.getByText('Copied to the clipboard.').waitFor()
      expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(secret)
      await expectAccessible(page, 'a new signing secret shown once')

      // The list shows it, subscribed to the one type checked.
      const row = page.locator('tbody tr', { has: page.getByRole('link', { name: receiver.url, exact: true }) })
      await row.waitFor()
      expect((await row.locator('td').allInnerTexts()).slice(0, 4)).toEqual([
        `${receiver.url}\nevents of ${name}`,
        'key.created',
        'every api',
        'enabled',
      ])
      const { endpoints } = await admin(target, 'webhooks.listEndpoints')
      expect(endpoints).toEqual([
        expect.objectContaining({ url: receiver.url, eventTypes: ['key.created'], enabled: true }),
      ])
      const endpointId = (endpoints as { endpointId: string }[])[0]!.endpointId

      // The secret shown is the one deliveries are signed with: the receiver verifies them with it.
      receiver.useSecret(secret)
      const { apiId } = await admin(target, 'apis.createApi', { name: `webhooks ${name}` })
      const first = await admin(target, 'keys.createKey', { apiId, name: 'announced' })
      const delivered = (keyId: string) => receiver.events.find((event) => event.data.keyId === keyId)
      const announced = await waitFor(() => delivered(first.keyId), 'key.created at the receiver', 10_000, 50)
      expect(announced).toMatchObject({ type: 'key.created', verified: true })

      // Once Done, the secret is gone from the page.
      await page.getByRole('button', { name: 'Done' }).click()
      expect(await page.getByLabel('Signing secret', { exact: true }).count()).toBe(0)
      expect(await page.content()).not.toContain(secret)

      await page.getByRole('link', { name: receiver.url, exact: true }).click()
      await page.getByRole('heading', { level: 1, name: `Endpoint ${receiver.url}` }).waitFor()
      await page.getByRole('button', { name: 'Disable endpoint' }).click()
      await page.getByRole('button', { name: 'Enable endpoint' }).waitFor()
      const read = () => admin(target, `webhooks.getEndpoint?endpointId=${endpointId}`)
      expect(await read()).toMatchObject({ enabled: false })
      await expectAccessible(page, "an endpoint's page")
      await page.getByRole('button', { name: 'Enable endpoint' }).click()
      await page.getByRole('button', { name: 'Disable endpoint' }).waitFor()
      expect(await read()).toMatchObject({ enabled: true })

      // A test event: an example of the type chosen, signed with the same secret, sent now; the answer is shown.
      await page.getByRole('button', { name: 'Send test event' }).click()
      await page.getByLabel('Event type', { exact: true }).selectOption('key.deleted')
      await page.getByRole('button', { name: 'Send now' }).click()
      const answered = page.getByRole('status').filter({ hasText: 'Delivered: the endpoint answered HTTP 204' })
      await answered.waitFor()
      const tested = receiver.events.find((event) => event.id.startsWith('msg_test_'))!
      expect(tested).toMatchObject({ type: 'key.deleted', data: { keyId: 'key_example' }, verified: true })
      expect(await answered.innerText()).toContain(tested.id)
      await expectAccessible(page, 'a test event sent')
      // In the delivery log, marked as a test, with nothing to send again (it is not kept).
      const testRow = page
        .getByRole('region', { name: 'Delivery attempts' })
        .locator('tbody tr', { hasText: tested.id })
      await testRow.waitFor()
      expect((await testRow.locator('td').allInnerTexts())[1]).toBe(`key.deleted test\n${tested.id}`)
      expect(await testRow.getByRole('button').count()).toBe(0)

      // The delivery log shows the delivery; sent again from it, the same event (its webhook-id) arrives once more.
      const attempts = page.getByRole('region', { name: 'Delivery attempts' }).locator('tbody tr')
      const logged = attempts.filter({ hasText: announced.id })
      await logged.waitFor()
      expect((await logged.locator('td').allInnerTexts()).slice(1, 5)).toEqual([
        `key.created\n${announced.id}`,
        '1',
        'delivered',
        'HTTP 204',
      ])
      await logged.getByRole('button', { name: `Send again event ${announced.id}` }).click()
      await page.getByText(`Queued the event ${announced.id} to be sent again.`).waitFor()
      const copies = () => receiver.events.filter((event) => event.id === announced.id && event.verified).length
      await waitFor(() => copies() === 2, 'the event sent again at the receiver', 10_000, 50)

      // Rotated with no grace: only the new secret signs, and the receiver verifies the next delivery with it.
      await page.getByRole('button', { name: 'Rotate secret' }).click()
      await page.getByLabel('The old secret keeps signing').selectOption('0')
      await page.getByRole('button', { name: 'Rotate now' }).click()
      const rotated = await page.getByLabel('New signing secret', { exact: true }).inputValue()
      expect(rotated).toMatch(/^whsec_/)
      expect(rotated).not.toBe(secret)
      await page.getByText('Rotated: only the new secret signs from now on.').waitFor()
      receiver.useSecret(rotated)
      const second = await admin(target, 'keys.createKey', { apiId, name: 'announced after rotating' })
      const resigned = await waitFor(() => delivered(second.keyId), 'key.created at the receiver', 10_000, 50)
      expect(resigned).toMatchObject({ type: 'key.created', verified: true })

      await page.getByRole('button', { name: 'Delete endpoint' }).click()
      await expectAccessible(page, 'the delete dialog of an endpoint')
      await page.getByRole('dialog').getByRole('button', { name: 'Delete endpoint' }).click()
      await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor()
      await page.getByText('No endpoints yet').waitFor()
      expect((await admin(target, 'webhooks.listEndpoints')).endpoints).toEqual([])
      expect(problems).toEqual([])
      await context.close()
    }, 60_000)
  })
}
