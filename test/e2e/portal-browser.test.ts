import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectAccessible, launchChromium, screenshotPath, watchProblems } from '../support/console-browser.js'
import { freePort } from '../support/free-port.js'
import { startKeygate, type KeygateProcess } from '../support/processes.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

/**
 * The customer portal's page in real Chromium, driven by its accessible names as a customer would, against a control
 * plane on Redis and a separate verifier: the keys it shows verify there, and the ones it revokes stop verifying
 * within the revocation bound. Whatever the operator or the customer named things, it shows as text; the page is
 * held to axe-core (no violation at all) and to a phone's width.
 */
const ROOT_KEY = 'portal-browser-root-key-0123456789'
const MAX_STALENESS_MS = 2_000
/** How often the test asks the verifier while it waits for a revocation. */
const ASK_EVERY_MS = 50
const KEY_NAME = '<img src=x onerror=alert(1)>'
const PORTAL_NAME = '<b>Acme</b> & <script>alert(2)</script> API'
const ACCENT = '#0f766e'
const LOGO = 'https://logo.example/acme.svg'
const RETURN_URL = 'https://app.example/settings'
const ALL_SCOPES = ['keys:read', 'keys:create', 'keys:reroll', 'keys:revoke', 'analytics:read']

const redis = useRedisServer()
let browser: Browser
let controlPlane: KeygateProcess
let verifier: KeygateProcess
let portalId: string
let apiIds: string[]

beforeAll(async () => {
  // The page's URL, as portal.createSession answers it: this control plane's /portal/.
  const port = await freePort()
  const env = {
    REDIS_URL: redis.url,
    KEYGATE_ROOT_KEY: ROOT_KEY,
    LOG_LEVEL: 'warn',
    MAX_STALENESS_MS: String(MAX_STALENESS_MS),
    POLL_INTERVAL_MS: '250',
  }
  ;[browser, controlPlane, verifier] = await Promise.all([
    launchChromium(),
    startKeygate(['control-plane'], { ...env, PORT: String(port), PORTAL_URL: `http://127.0.0.1:${port}/portal/` }),
    startKeygate(['verifier'], env),
  ])
  apiIds = [
    (await management('v1', 'apis.createApi', { name: 'payments' })).apiId,
    (await management('v1', 'apis.createApi', { name: 'search' })).apiId,
  ]
  const created = await management('v2', 'portal.createPortal', {
    slug: 'acme',
    name: PORTAL_NAME,
    apiIds,
    logoUrl: LOGO,
    accentColor: ACCENT,
  })
  portalId = created.data.portalId
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await verifier?.stop()
  await controlPlane?.stop()
})

/** A management call with the root key; its answer, 200 expected. */
async function management(version: 'v1' | 'v2', operation: string, body: object): Promise<Record<string, any>> {
  const answer = await fetch(`${controlPlane.url}/${version}/${operation}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ROOT_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(answer.status, await answer.clone().text()).toBe(200)
  return (await answer.json()) as Record<string, any>
}

/** A portal session for the customer, as the operator's backend mints it: its id and the page's URL (one use). */
async function mintSession(
  externalId: string,
  options: { scopes?: string[]; apiIds?: string[] } = {},
): Promise<{ id: string; url: string }> {
  const { data } = await management('v2', 'portal.createSession', {
    portal: portalId,
    externalId,
    scopes: options.scopes ?? ALL_SCOPES,
    returnUrl: RETURN_URL,
    ...(options.apiIds ? { apiIds: options.apiIds } : {}),
  })
  expect(data.url).toMatch(new RegExp(`^${escaped(controlPlane.url)}/portal/\\?code=pst_`))
  return { id: data.id, url: data.url }
}

async function verify(key: string): Promise<string> {
  const answer = await fetch(`${verifier.url}/v1/keys.verifyKey`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key }),
  })
  return ((await answer.json()) as { code: string }).code
}

/** The SVG the logo URL answers with: served by the test, for the machine has no network beyond loopback. */
const LOGO_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10" fill="#0f766e"/></svg>'

/**
 * A fresh context (its own cookies) at `width` px, allowed the clipboard, with the logo's host answered here; the
 * logo requests it saw, and the dialogs (alert()) a page opened — none is expected.
 */
async function newContext(width = 1280): Promise<{ context: BrowserContext; logoRequests: Record<string, string>[] }> {
  const context = await browser.newContext({ viewport: { width, height: 900 } })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: controlPlane.url })
  const logoRequests: Record<string, string>[] = []
  await context.route(LOGO, async (route) => {
    logoRequests.push(await route.request().allHeaders())
    await route.fulfill({ contentType: 'image/svg+xml', body: LOGO_SVG })
  })
  return { context, logoRequests }
}

/** Opens `url` and waits for the signed-in page; the alerts any script opened are collected in `alerts`. */
async function openPortal(context: BrowserContext, url: string): Promise<{ page: Page; alerts: string[] }> {
  const page = await context.newPage()
  const alerts: string[] = []
  page.on('dialog', (dialog) => {
    alerts.push(dialog.message())
    void dialog.dismiss()
  })
  await page.goto(url)
  await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor()
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
  return { page, alerts }
}

/** The key a ShownOnce shows, once it is there. */
async function shownKey(page: Page): Promise<string> {
  const field = page.getByLabel('New key', { exact: true })
  await field.waitFor()
  return field.inputValue()
}

/** The accessible name of what has focus (page code as text: the tests are type-checked without the DOM's types). */
const focused = (page: Page) => page.evaluate<string>('document.activeElement?.textContent ?? ""')

describe('the portal page against a control plane on Redis and a separate verifier', () => {
  it('signs in with the link, creates, rolls and revokes keys that the verifier judges, and signs out', async () => {
    const session = await mintSession('customer-flow')
    const { context, logoRequests } = await newContext()
    const { page, alerts } = await openPortal(context, session.url)
    const problems = watchProblems(page)

    // The code is gone from the address bar.
    expect(new URL(page.url()).searchParams.has('code')).toBe(false)
    // The notices' two live regions are in the accessibility tree before anything is said in them: a screen reader
    // announces a change only in a region it already knows.
    expect(await page.getByRole('status').count()).toBe(1)
    expect(await page.getByRole('alert').count()).toBe(1)
    // The branding is the portal's, its name as text.
    const banner = page.getByRole('banner')
    await expect.poll(() => banner.innerText()).toContain(PORTAL_NAME)
    expect(await banner.locator('b, script').count()).toBe(0)
    expect(await banner.locator('img').getAttribute('src')).toBe(LOGO)
    expect(await banner.getByRole('link', { name: 'Back' }).getAttribute('href')).toBe(RETURN_URL)
    // The logo was fetched with no Referer: the page's URL never leaves the origin (it held the code).
    await expect.poll(() => logoRequests.length).toBeGreaterThan(0)
    for (const headers of logoRequests) expect(headers).not.toHaveProperty('referer')
    const accent = await page
      .getByRole('button', { name: 'Create key' })
      .evaluate((button) => (globalThis as any).getComputedStyle(button).backgroundColor)
    expect(accent).toBe('rgb(15, 118, 110)')

    // Create: the api is chosen (the session has two), the key is shown once, copied, and verifies.
    await page.getByLabel('Name', { exact: true }).fill(KEY_NAME)
    await page.getByLabel('For', { exact: true }).selectOption({ label: 'search' })
    await page.getByRole('button', { name: 'Create key' }).click()
    const first = await shownKey(page)
    await expect
      .poll(() => page.getByRole('region', { name: /New key/ }).innerText())
      .toContain('will not see it again')
    await page.getByRole('button', { name: 'Copy new key' }).click()
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(first)
    expect(await verify(first)).toBe('VALID')
    await page.getByRole('button', { name: 'Done' }).click()
    expect(await page.getByLabel('New key', { exact: true }).count()).toBe(0)
    await expect.poll(() => focused(page)).toBe('Your keys')

    // The key's name is a cell's text, not an element.
    const table = page.getByRole('table', { name: 'Your keys' })
    await table.getByRole('cell', { name: KEY_NAME, exact: true }).waitFor()
    expect(await page.locator('main img').count()).toBe(0)

    // Roll with an hour's overlap: the new key verifies, the old one still does.
    await page.getByRole('button', { name: new RegExp(`^Roll ${escaped(KEY_NAME)}`) }).click()
    const roll = page.getByRole('dialog', { name: /^Roll / })
    await roll.getByLabel('The old key keeps working for').selectOption({ label: '1 hour' })
    await roll.getByRole('button', { name: 'Roll key' }).click()
    const second = await shownKey(page)
    expect(second).not.toBe(first)
    await expect.poll(() => page.locator('.shown-once').innerText()).toContain('The old key keeps working until')
    expect(await verify(second)).toBe('VALID')
    expect(await verify(first)).toBe('VALID')
    await page.getByRole('button', { name: 'Done' }).click()
    await expect.poll(() => table.getByRole('row').count()).toBe(3)

    // Revoke the new key: asked first; once the call answered, the verifier refuses it within the bound.
    const starts = await table.locator('td.mono').allInnerTexts()
    const start = starts.find((shown) => second.startsWith(shown.replace(/…$/, '')))
    expect(start, `the new key's start among ${starts.join(', ')}`).toBeDefined()
    const revokeButton = page.getByRole('button', { name: `Revoke ${KEY_NAME} (${start})`, exact: true })
    await revokeButton.click()
    const ask = page.getByRole('dialog', { name: /^Revoke / })
    await ask.getByRole('button', { name: 'Cancel' }).click()
    // Cancelled: nothing revoked, and focus is back on the button that asked.
    await expect.poll(() => focused(page)).toMatch(/^Revoke/)
    expect(await verify(second)).toBe('VALID')
    await revokeButton.click()
    const answered = page.waitForResponse((response) => response.url().endsWith('/v2/portal.revokeKey'))
    await ask.getByRole('button', { name: 'Revoke key' }).click()
    expect((await answered).status()).toBe(200)
    const answeredAt = Date.now()
    await waitFor(async () => (await verify(second)) === 'NOT_FOUND', 'the verifier to refuse the revoked key', 10_000)
    const deniedAfterMs = Date.now() - answeredAt
    console.log(`portal revoke → NOT_FOUND on the verifier after ${deniedAfterMs} ms (bound ${MAX_STALENESS_MS} ms)`)
    expect(deniedAfterMs).toBeLessThanOrEqual(MAX_STALENESS_MS + ASK_EVERY_MS)
    expect(await verify(first)).toBe('VALID')
    await expect.poll(() => page.getByRole('status').first().innerText()).toMatch(/was revoked\.$/)
    await expect.poll(() => focused(page)).toBe('Your keys')
    await expect.poll(() => table.getByRole('row').count()).toBe(2)

    // Usage: the whole session's, and the key's, over 30 days.
    const usage = page.getByRole('region', { name: 'Usage' })
    await usage.getByRole('img', { name: /^All keys, last 30 days: \d+ verifications/ }).waitFor()
    // While the key's answer is on its way, the session's is not drawn under the key's name.
    let answer!: () => void
    const held = new Promise<void>((resolve) => (answer = resolve))
    await page.route(
      '**/v2/portal.getVerifications',
      async (route) => {
        await held
        await route.continue()
      },
      { times: 1 },
    )
    await usage.getByLabel('Show the usage of').selectOption({ index: 1 })
    await expect.poll(() => usage.innerText()).toContain('Loading usage…')
    expect(await usage.getByRole('img').count()).toBe(0)
    answer()
    await usage
      .getByRole('img', { name: new RegExp(`^${escaped(KEY_NAME)} .*last 30 days: \\d+ verifications`) })
      .waitFor()
    await page.screenshot({ path: screenshotPath('portal.png'), fullPage: true })

    // Sign out: the session is over, here and for any call its cookie could still make.
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { level: 1, name: 'You have signed out' }).waitFor()
    expect(await page.getByRole('link', { name: 'Back to where you came from' }).getAttribute('href')).toBe(RETURN_URL)
    await page.reload()
    await page.getByRole('heading', { level: 1, name: 'Your session has ended' }).waitFor()
    expect(alerts).toEqual([])
    expect(problems.filter((problem) => !problem.includes('401'))).toEqual([])
    await context.close()
  }, 60_000)

  it('shows the session as ended when its link is opened again, in a fresh browser', async () => {
    const session = await mintSession('customer-reuse')
    const first = await newContext()
    await openPortal(first.context, session.url)
    await first.context.close()
    const { context } = await newContext()
    const page = await context.newPage()
    await page.goto(session.url)
    await page.getByRole('heading', { level: 1, name: 'Your session has ended' }).waitFor()
    expect(new URL(page.url()).searchParams.has('code')).toBe(false)
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0)
    // Everything else went away: the heading that says why has focus, so a screen reader says it at once.
    await expect.poll(() => focused(page)).toBe('Your session has ended')
    await expectAccessible(page, 'the session-ended page', { every: true })
    await context.close()
  })

  it('ends the page with the return link when the operator revokes the session under it', async () => {
    const session = await mintSession('customer-revoked')
    const { context } = await newContext()
    const { page } = await openPortal(context, session.url)
    // Once the page has loaded what it shows: the next call it makes is the one the test makes it make.
    await page.getByText('You have no keys yet.').waitFor()
    await page.getByRole('img', { name: /^All keys, last 30 days/ }).waitFor()
    await management('v2', 'portal.revokeSession', { sessionId: session.id })
    await page.getByLabel('Name', { exact: true }).fill('too late')
    await page.getByRole('button', { name: 'Create key' }).click()
    await page.getByRole('heading', { level: 1, name: 'Your session has ended' }).waitFor()
    expect(await page.getByRole('link', { name: 'Back to where you came from' }).getAttribute('href')).toBe(RETURN_URL)
    await context.close()
  })

  it('keeps the link’s code when the server fails to exchange it, so that a reload signs in', async () => {
    const session = await mintSession('customer-retry')
    const { context } = await newContext()
    const page = await context.newPage()
    // What the control plane answers while its store is down: the code never reached the store, and still works.
    await page.route('**/v2/portal.exchangeCode', (route) =>
      route.fulfill({
        status: 503,
        contentType: 'application/problem+json',
        json: { meta: { requestId: 'req_test' }, error: { status: 503, detail: 'The store is unavailable.' } },
      }),
    )
    await page.goto(session.url)
    await expect.poll(() => page.getByRole('alert').first().innerText()).toContain('The store is unavailable.')
    expect(page.url()).toContain('?code=pst_')
    await page.unroute('**/v2/portal.exchangeCode')
    await page.reload()
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    expect(new URL(page.url()).searchParams.has('code')).toBe(false)
    await context.close()
  })

  it('shows no logo, return link or colour that is not the kind it must be, whatever the session answers', async () => {
    const session = await mintSession('customer-branding')
    const { context } = await newContext()
    // The server accepts none of these (its schemas); the page checks again, for a record stored before they did.
    await context.route('**/v2/portal.getSession', async (route) => {
      const response = await route.fetch()
      const answer = (await response.json()) as { data: { returnUrl?: string; portal: Record<string, string> } }
      answer.data.returnUrl = 'javascript:alert(3)'
      answer.data.portal.logoUrl = 'http://logo.example/acme.svg'
      answer.data.portal.accentColor = 'url(https://logo.example/track.svg)'
      await route.fulfill({ response, json: answer })
    })
    const { page, alerts } = await openPortal(context, session.url)
    const problems = watchProblems(page)
    const banner = page.getByRole('banner')
    await expect.poll(() => banner.innerText()).toContain(PORTAL_NAME)
    expect(await banner.locator('img').count()).toBe(0)
    expect(await page.getByRole('link').count()).toBe(0)
    // The page's own accent (ui.css), not the operator's value.
    const colour = await page
      .getByRole('button', { name: 'Create key' })
      .evaluate((button) => (globalThis as any).getComputedStyle(button).backgroundColor)
    expect(colour).toBe('rgb(29, 78, 216)')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { level: 1, name: 'You have signed out' }).waitFor()
    expect(await page.getByRole('link').count()).toBe(0)
    expect(alerts).toEqual([])
    expect(problems).toEqual([])
    await context.close()
  })

  it('offers only what the session’s scopes allow', async () => {
    await management('v2', 'keys.createKey', { apiId: apiIds[0], externalId: 'customer-reader', name: 'reader key' })
    const session = await mintSession('customer-reader', { scopes: ['keys:read'], apiIds: [apiIds[0]!] })
    const { context } = await newContext()
    const { page } = await openPortal(context, session.url)
    await page.getByRole('cell', { name: 'reader key', exact: true }).waitFor()
    // Reloaded once the code is spent and gone, the page signs in with the session's cookie.
    await page.reload()
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    await page.getByRole('cell', { name: 'reader key', exact: true }).waitFor()
    expect(await page.getByRole('button', { name: /^(Create key|Roll|Revoke)/ }).count()).toBe(0)
    expect(await page.getByRole('heading', { name: 'Usage' }).count()).toBe(0)
    // The code's history entry was replaced, not left behind the page's: Back leaves the page.
    await page.goBack()
    expect(page.url()).not.toContain('code=')
    await context.close()
  })

  it("never shows another customer's keys, and refuses a forged call for one and a call from another site", async () => {
    const mine = (await management('v2', 'keys.createKey', { apiId: apiIds[0], externalId: 'cust_own', name: 'mine' }))
      .data
    const theirs = (
      await management('v2', 'keys.createKey', { apiId: apiIds[0], externalId: 'cust_other', name: 'not-yours' })
    ).data
    const { context } = await newContext()
    const { page } = await openPortal(context, (await mintSession('cust_own')).url)
    await page.getByRole('cell', { name: 'mine', exact: true }).waitFor()
    expect(await page.getByText('not-yours').count()).toBe(0)
    // From the signed-in page itself (its cookie sent): the other customer's key by id, as a forgery would name it.
    const forged = (operation: string, body: object) =>
      page.evaluate(
        `fetch('/v2/${operation}', { method: 'POST', headers: { 'content-type': 'application/json' }, ` +
          `body: ${JSON.stringify(JSON.stringify(body))} }).then((r) => r.status)`,
      )
    expect(await forged('portal.rerollKey', { keyId: theirs.keyId, expiration: 0 })).toBe(404)
    expect(await forged('portal.revokeKey', { keyId: theirs.keyId })).toBe(404)
    // Usage is read by the customer's own externalId: their key named counts nothing of theirs.
    const counted = await page.evaluate(
      `fetch('/v2/portal.getVerifications', { method: 'POST', headers: { 'content-type': 'application/json' }, ` +
        `body: ${JSON.stringify(JSON.stringify({ startTime: Date.now() - 3_600_000, endTime: Date.now(), keyId: theirs.keyId }))} })` +
        `.then(async (r) => [r.status, (await r.json()).data.reduce((sum, point) => sum + point.total, 0)])`,
    )
    expect(counted).toEqual([200, 0])
    expect(await verify(theirs.key)).toBe('VALID')
    expect(await forged('portal.listKeys', {})).toBe(200)

    // Another site's page, in the same browser (the customer's cookie in it), calling the portal: refused.
    const evil = createServer((_request, response) => response.end('<!doctype html><title>elsewhere</title>'))
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve))
    try {
      const other = await context.newPage()
      await other.goto(`http://localhost:${(evil.address() as AddressInfo).port}/`)
      const crossSite = await other.evaluate(
        `fetch(${JSON.stringify(`${controlPlane.url}/v2/portal.revokeKey`)}, { method: 'POST', mode: 'no-cors', ` +
          `credentials: 'include', headers: { 'content-type': 'text/plain' }, ` +
          `body: ${JSON.stringify(JSON.stringify({ keyId: mine.keyId }))} }).then(() => 'sent', () => 'failed')`,
      )
      expect(['sent', 'failed']).toContain(crossSite)
      await other.close()
    } finally {
      await new Promise<void>((resolve) => evil.close(() => resolve()))
    }
    // Whatever reached the control plane changed nothing: the key verifies, and still shows on the page.
    expect(await verify(mine.key)).toBe('VALID')
    expect(await forged('portal.listKeys', {})).toBe(200)
    await context.close()
  })

  it("shows the plan's thresholds with the usage counted so far, as the alerts count it", async () => {
    const { data: made } = await management('v2', 'keys.createKey', {
      apiId: apiIds[0],
      externalId: 'customer-metered',
    })
    await management('v2', 'identities.updateIdentity', {
      identity: 'customer-metered',
      usageThresholds: [
        { measure: 'billable', period: 'month', value: 5 },
        { measure: 'credits', period: 'day', value: 100 },
      ],
    })
    for (let i = 0; i < 2; i++) expect(await verify(made.key)).toBe('VALID')
    // Once the verifier has handed its rows over and the control plane has ingested them.
    await waitFor(async () => {
      const { data } = await management('v2', 'analytics.getUsage', {
        externalId: 'customer-metered',
        start: Date.now() - 86_400_000,
        granularity: 'month',
      })
      return data.total.billable === 2 || undefined
    }, 'the two verifications in the engine')
    const { context } = await newContext()
    const { page } = await openPortal(context, (await mintSession('customer-metered')).url)
    const thresholds = page.getByRole('region', { name: "Your plan's thresholds" })
    await thresholds.getByText('2 of 5 billable verifications this month (UTC)').waitFor()
    await thresholds.getByText('0 of 100 credits spent today (UTC)').waitFor()
    const meter = thresholds.getByRole('meter', { name: '2 of 5 billable verifications this month (UTC)' })
    expect(await meter.getAttribute('value')).toBe('2')
    expect(await meter.getAttribute('max')).toBe('5')
    await expectAccessible(page, "the portal's thresholds")
    // A customer without thresholds is shown none.
    const plain = await openPortal(context, (await mintSession('customer-phone')).url)
    await plain.page.getByRole('heading', { name: 'Usage' }).waitFor()
    expect(await plain.page.getByRole('region', { name: "Your plan's thresholds" }).count()).toBe(0)
    await context.close()
  })

  it('passes axe-core with no violation, and fits a 375 px phone without scrolling sideways', async () => {
    await management('v2', 'keys.createKey', {
      apiId: apiIds[0],
      externalId: 'customer-phone',
      name: `${KEY_NAME} with a name long enough to wrap on a phone's narrow screen`,
      expires: Date.now() + 86_400_000,
      credits: { remaining: 1_000 },
    })
    const session = await mintSession('customer-phone')
    const { context } = await newContext(375)
    const { page } = await openPortal(context, session.url)
    const problems = watchProblems(page)
    const pageWidth = () => page.evaluate<number>('document.documentElement.scrollWidth')
    await page.getByRole('table', { name: 'Your keys' }).waitFor()
    await page.getByRole('img', { name: /^All keys, last 30 days/ }).waitFor()
    expect(await pageWidth(), 'the keys and usage').toBeLessThanOrEqual(375)
    // A row's buttons side by side beside a long name, not one above the other (the table scrolls in its region).
    const [roll, revoke] = await Promise.all(
      ['Roll', 'Revoke'].map((action) => page.getByRole('button', { name: new RegExp(`^${action} `) }).boundingBox()),
    )
    expect(roll!.y).toBe(revoke!.y)
    await expectAccessible(page, 'the portal page at 375 px', { every: true })
    // The usage table behind its disclosure, a key shown once, and a dialog, each at 375 px.
    await page.getByText('Show each day as a table').click()
    // Every one of the 30 days, today's included, under the header.
    expect(await page.getByRole('table', { name: 'All keys, last 30 days, by day' }).getByRole('row').count()).toBe(31)
    expect(await pageWidth(), 'the usage table').toBeLessThanOrEqual(375)
    await page.getByRole('button', { name: 'Create key' }).click()
    await shownKey(page)
    expect(await pageWidth(), 'a new key shown').toBeLessThanOrEqual(375)
    await page.screenshot({ path: screenshotPath('portal-phone.png'), fullPage: true })
    await expectAccessible(page, 'a new key shown at 375 px', { every: true })
    await page
      .getByRole('button', { name: /^Roll / })
      .first()
      .click()
    const dialog = page.getByRole('dialog', { name: /^Roll / })
    await dialog.waitFor()
    expect(await pageWidth(), 'the roll dialog').toBeLessThanOrEqual(375)
    // The field is as tall as its label and select: no gap opens between it and the dialog's buttons.
    const field = await dialog.locator('.field').boundingBox()
    const select = await dialog.getByRole('combobox').boundingBox()
    expect(field!.y + field!.height - (select!.y + select!.height)).toBeLessThan(1)
    await expectAccessible(page, 'the roll dialog at 375 px', { every: true })
    // Keyboard: Escape closes the dialog, and focus returns to the button that opened it.
    await page.keyboard.press('Escape')
    expect(await page.getByRole('dialog').count()).toBe(0)
    await expect.poll(() => focused(page)).toMatch(/^Roll /)
    // The table scrolls in its own region, which a keyboard can reach.
    const region = page.getByRole('region', { name: 'Table of your keys' })
    expect(await region.getAttribute('tabindex')).toBe('0')
    expect(problems).toEqual([])
    await context.close()
  })
})

/** `text` as a literal in a regular expression. */
function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
