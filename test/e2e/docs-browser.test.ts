import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OPERATIONS } from '../../control-plane/openapi/operations.js'
import { startKeygate, type KeygateProcess } from '../support/processes.js'

/** Debian's chromium (.ci/run installs it); playwright cannot download browsers here. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

let keygate: KeygateProcess
let browser: Browser

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`)
  keygate = await startKeygate(['dev'], { LOG_LEVEL: 'warn' })
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    // The machine has no network beyond loopback: no background fetches, no sandbox (root in CI), no GPU.
    args: [
      '--no-sandbox',
      '--headless',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  })
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await keygate?.stop()
})

describe('API docs in a browser', () => {
  it('renders /docs with every operation, and shows an operation once opened', async () => {
    const page = await browser.newPage()
    const failed: string[] = []
    page.on('requestfailed', (request) => failed.push(request.url()))
    await page.goto(`${keygate.url}/docs`)
    await page.locator('.opblock').first().waitFor({ timeout: 20_000 })
    const paths = await page.locator('.opblock-summary-path').allInnerTexts()
    const shown = new Set(paths.map((path) => path.replace(/\u200b/g, '').trim()))
    for (const id of Object.keys(OPERATIONS)) expect(shown, id).toContain(`/v1/${id}`)
    // Opening one shows its request body schema, fetched from /openapi.json by the page itself.
    await page.locator('.opblock-summary', { hasText: '/v1/keys.verifyKey' }).click()
    await expect.poll(() => page.locator('.opblock.is-open').innerText(), { timeout: 10_000 }).toContain('Request body')
    expect(await page.title()).toMatch(/swagger/i)
    expect(failed).toEqual([])
  }, 60_000)
})
