import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isV2Operation, OPERATIONS, operationPath } from '../../control-plane/openapi/operations.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { launchChromium, watchProblems } from '../support/console-browser.js'
import { startKeygate, type KeygateProcess } from '../support/processes.js'

let keygate: KeygateProcess
let browser: Browser
/** The root key `keygate dev` printed, as a new user would copy it. */
let rootKey: string

beforeAll(async () => {
  keygate = await startKeygate(['dev'], { LOG_LEVEL: 'warn' })
  rootKey = /root key: (\S+)/.exec(keygate.output())![1]!
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await keygate?.stop()
})

describe('API docs in a browser', () => {
  it('renders /docs with every operation of both versions, and shows an operation once opened', async () => {
    const page = await docsPage()
    const problems = watchProblems(page)
    const answer = await page.goto(`${keygate.url}/docs`)
    // The policy is on: the "no violation" below is not met by the absence of one.
    expect(answer?.headers()['content-security-policy']).toMatch(/script-src 'self'.*frame-ancestors 'none'/)
    await page.locator('.opblock').first().waitFor({ timeout: 20_000 })
    const paths = await page.locator('.opblock-summary-path').allInnerTexts()
    const shown = new Set(paths.map((path) => path.replace(/\u200b/g, '').trim()))
    // Every operation the document has (openapi.test.ts holds the document to OPERATIONS and the served routes).
    const document = (await (await fetch(`${keygate.url}/openapi.json`)).json()) as { paths: Record<string, object> }
    expect(shown).toEqual(new Set(Object.keys(document.paths)))
    for (const id of Object.keys(OPERATIONS).filter((id) => !isV2Operation(id)))
      expect(shown, id).toContain(operationPath(id))
    expect([...shown].filter((path) => path.startsWith('/v2/')).length).toBeGreaterThanOrEqual(3)
    // v2's groups are their own, after v1's.
    const tags = (await page.locator('h3.opblock-tag').allInnerTexts()).map((tag) => tag.split('\n')[0]!.trim())
    expect(tags).toContain('v2 keys')
    expect(tags.indexOf('v2 apis')).toBeGreaterThan(tags.indexOf('health'))
    // Opening one shows its request body schema, fetched from /openapi.json by the page itself.
    await page.locator('.opblock-summary', { hasText: '/v1/keys.verifyKey' }).click()
    await expect.poll(() => page.locator('.opblock.is-open').innerText(), { timeout: 10_000 }).toContain('Request body')
    expect(await page.title()).toMatch(/swagger/i)
    expect(problems).toEqual([])
  }, 60_000)

  it('cannot be framed by another site: the browser refuses to show /docs in an iframe', async () => {
    // Another origin (another port) on loopback, as a page an admin is lured to would frame it.
    const framer = createServer((_request, response) =>
      response.setHeader('content-type', 'text/html').end(`<iframe src="${keygate.url}/docs/"></iframe>`),
    )
    await new Promise<void>((resolve) => framer.listen(0, '127.0.0.1', resolve))
    try {
      const page = await browser.newPage()
      await page.goto(`http://127.0.0.1:${(framer.address() as AddressInfo).port}/`)
      const frame = page.frames().find((candidate) => candidate !== page.mainFrame())!
      expect(frame.url()).toBe('chrome-error://chromewebdata/')
      expect(await frame.locator('#swagger-ui').count()).toBe(0)
    } finally {
      framer.closeAllConnections()
      framer.close()
    }
  }, 60_000)

  it('shows the header as written: the services of both versions as code, not eaten by Markdown', async () => {
    const page = await docsPage()
    const problems = watchProblems(page)
    await page.goto(`${keygate.url}/docs`)
    const header = page.locator('.information-container .description')
    await header.waitFor({ timeout: 20_000 })
    const text = await header.innerText()
    expect(text).toContain(
      '(apis.*, keys.*, permissions.*, identities.*, ratelimits.*, audit.*, rootKeys.*, webhooks.*)',
    )
    expect(text).toContain('(apis.*, keys.*, identities.*, permissions.*, ratelimit.*)')
    expect(text).toContain('POST {base}/v2/{service}.{method}')
    expect(await header.locator('code', { hasText: 'apis.*' }).count()).toBe(2)
    expect(problems).toEqual([])
  }, 60_000)

  it('runs "Try it out" as printed: Authorize with the root key, createApi with its example → 200, then createKey with that apiId → 200', async () => {
    const page = await docsPage()
    const problems = watchProblems(page)
    await page.goto(`${keygate.url}/docs`)
    await page.locator('.btn.authorize').first().click({ timeout: 20_000 })
    await page.locator('.modal-ux input').first().fill(rootKey)
    await page.locator('.modal-ux .auth-btn-wrapper .authorize').click()
    await page.locator('.modal-ux .btn-done').click()

    const createApi = await tryItOut(page, '/v1/apis.createApi')
    expect(JSON.parse(await createApi.locator('textarea.body-param__text').inputValue())).toEqual({ name: 'payments' })
    const api = await execute(createApi)
    expect(api.status).toBe('200')
    const { apiId } = JSON.parse(api.body) as { apiId: string }
    expect(apiId).toMatch(/^api_/)

    const createKey = await tryItOut(page, '/v1/keys.createKey')
    const body = createKey.locator('textarea.body-param__text')
    const example = await body.inputValue()
    expect(JSON.parse(example)).not.toHaveProperty('recoverable')
    await body.fill(example.replace(WIRE_EXAMPLES.apiId, apiId))
    const key = await execute(createKey)
    expect(key.status).toBe('200')
    expect(JSON.parse(key.body)).toMatchObject({
      keyId: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^sk_/),
    })

    // v2 with the same root key: the envelope comes back.
    const createApiV2 = await tryItOut(page, '/v2/apis.createApi')
    const v2 = await execute(createApiV2)
    expect(v2.status).toBe('200')
    expect(JSON.parse(v2.body)).toMatchObject({
      meta: { requestId: expect.stringMatching(/^req_/) },
      data: { apiId: expect.stringMatching(/^api_/) },
    })
    expect(problems).toEqual([])
  }, 90_000)

  it("opens an error body's docs link: a page on what the code means and how to fix it", async () => {
    const answer = await fetch(`${keygate.url}/v1/keys.createKey`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${rootKey}` },
      body: '{"apiid":"x"}',
    })
    const { error } = (await answer.json()) as { error: { code: string; message: string; docs: string } }
    expect(error.message).toBe('apiid: is not a known field (did you mean apiId?); apiId: is required')
    const page = await browser.newPage()
    const problems: string[] = []
    page.on('console', (message) => problems.push(message.text()))
    page.on('pageerror', (err) => problems.push(err.message))
    await page.goto(new URL(error.docs, keygate.url).href)
    expect(await page.locator('h1').innerText()).toBe('BAD_REQUEST HTTP 400')
    expect(await page.locator('h2').allInnerTexts()).toEqual(['What it means', 'How to fix it', 'The answer'])
    await page.locator('a', { hasText: 'Keygate error codes' }).click()
    await page.locator('table').waitFor()
    expect(await page.locator('tbody tr').count()).toBeGreaterThan(10)
    expect(problems).toEqual([])
  }, 60_000)
})

/**
 * A new page on which every Content-Security-Policy violation, even one a script catches, is logged as a console
 * error, which watchProblems() collects. The listener is added through the DevTools protocol: no policy is loosened.
 */
async function docsPage(): Promise<Page> {
  const page = await browser.newPage()
  // As text: the tests are type-checked without the DOM's types, and this runs in the page.
  await page.addInitScript(
    "document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.effectiveDirective} refused ${e.blockedURI || 'inline'}`))",
  )
  return page
}

/** Opens an operation and presses "Try it out"; returns its block. */
async function tryItOut(page: Page, path: string) {
  const block = page.locator('.opblock', { has: page.locator('.opblock-summary-path', { hasText: path }) })
  await block.locator('.opblock-summary').click()
  await block.locator('.try-out__btn').click()
  return block
}

/** Presses Execute and reads the live answer's status and body. */
async function execute(block: Locator): Promise<{ status: string; body: string }> {
  await block.locator('.execute').click()
  const status = block.locator('.live-responses-table tr.response .response-col_status')
  await status.waitFor({ timeout: 10_000 })
  return {
    status: (await status.innerText()).trim(),
    body: await block.locator('.live-responses-table tr.response .response-col_description pre').first().innerText(),
  }
}
