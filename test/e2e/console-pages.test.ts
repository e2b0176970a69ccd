import type { Browser, Page } from 'playwright-core'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import {
  expectAccessible,
  launchChromium,
  screenshotPath,
  usageSummary,
  waitForIngested,
  watchProblems,
} from '../support/console-browser.js'
import { startKeygate, type KeygateProcess } from '../support/processes.js'
import { waitFor } from '../support/wait-for.js'
import { waitForQuiet } from '../../bench/lib/process-cpu.js'
import { clearOfWindowEdge } from '../support/window-edge.js'

/**
 * The console on `keygate dev`, page by page: how fast the first page is usable, every page under axe-core, the
 * create-key flow by keyboard alone, attacker-controlled names and meta shown as text, a 403 said in words, signing
 * out, and usage (the overview, and each api's, key's and identity's chart) read from the analytics engine. The keys
 * table's and the overview's screenshots for docs/console.md are taken here (`npm run docs:screenshots`).
 */
const XSS = '<img src=x onerror="window.__xss=(window.__xss||0)+1">'

let browser: Browser
let dev: KeygateProcess
let rootKey: string

beforeAll(async () => {
  // Webhook endpoints on this machine's loopback (made disabled, or for an event these tests never cause).
  ;[browser, dev] = await Promise.all([
    launchChromium(),
    startKeygate(['dev'], { LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE: 'true' }),
  ])
  rootKey = /root key: (\S+)/.exec(dev.output())![1]!
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await dev?.stop()
})

async function admin(path: string, body: object, key = rootKey): Promise<Record<string, any>> {
  const answer = await fetch(`${dev.url}/v1/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  })
  expect(answer.status, await answer.clone().text()).toBe(200)
  return (await answer.json()) as Record<string, any>
}

/**
 * A new tab signed in on `landing` (the apis, as most tests start there; the console's own landing page is the
 * overview, whose queries count against the analytics quota).
 */
async function signedIn(
  key = rootKey,
  viewport = { width: 1280, height: 900 },
  landing = { hash: '#/apis', heading: 'Apis' },
): Promise<Page> {
  const context = await browser.newContext({ viewport })
  const page = await context.newPage()
  await page.goto(`${dev.url}/console${landing.hash}`)
  await page.getByLabel('Root key').fill(key)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { level: 1, name: landing.heading }).waitFor()
  return page
}

const OVERVIEW = { hash: '', heading: 'Overview' }

/** Runs ClickHouse SQL over the verifications with the root key, as a script would: the rows. */
async function analytics(query: string, key = rootKey): Promise<Record<string, unknown>[]> {
  const answer = await fetch(`${dev.url}/v2/analytics.getVerifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query }),
  })
  expect(answer.status, await answer.clone().text()).toBe(200)
  return ((await answer.json()) as { data: Record<string, unknown>[] }).data
}

async function getKey(keyId: string): Promise<Record<string, any>> {
  const answer = await fetch(`${dev.url}/v1/keys.getKey?keyId=${keyId}`, {
    headers: { authorization: `Bearer ${rootKey}` },
  })
  expect(answer.status, await answer.clone().text()).toBe(200)
  return (await answer.json()) as Record<string, any>
}

/** A webhook endpoint as webhooks.getEndpoint answers it. */
async function getEndpoint(endpointId: string): Promise<Record<string, any>> {
  const answer = await fetch(`${dev.url}/v1/webhooks.getEndpoint?endpointId=${endpointId}`, {
    headers: { authorization: `Bearer ${rootKey}` },
  })
  expect(answer.status, await answer.clone().text()).toBe(200)
  return (await answer.json()) as Record<string, any>
}

/** Where the webhook endpoints these tests make point: a closed port, never delivered to. */
const NOWHERE = 'http://127.0.0.1:9/hooks'

/** apis.getApi's status for an api: 200 while it exists, 404 once deleted. */
async function apiStatus(apiId: string): Promise<number> {
  const answer = await fetch(`${dev.url}/v1/apis.getApi?apiId=${apiId}`, {
    headers: { authorization: `Bearer ${rootKey}` },
  })
  return answer.status
}

async function verify(key: string, tags?: string[]): Promise<{ valid: boolean; code: string }> {
  const answer = await fetch(`${dev.url}/v1/keys.verifyKey`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key, tags }),
  })
  return (await answer.json()) as { valid: boolean; code: string }
}

/** Saves a key's edit form; answers what the page then says: that it saved (or had nothing to), or the form's error. */
async function saveEdit(page: Page): Promise<string> {
  await page.getByRole('button', { name: 'Save changes' }).click()
  const said = page
    .getByText(/^(Saved\.|Nothing to save)/)
    .or(page.getByRole('form', { name: 'Edit the key' }).getByRole('alert'))
  await said.first().waitFor()
  return said.first().innerText()
}

/** Opens a section from the header, as an admin would, and waits for its heading. */
async function open(page: Page, link: string, heading = link): Promise<void> {
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: link }).click()
  await page.getByRole('heading', { level: 1, name: heading }).waitFor()
}

describe('the console on keygate dev', () => {
  it('is interactive within 1 s of asking for it, in a browser that has nothing cached', async () => {
    // Each try is a cold load (a new context caches nothing). The suite runs test files side by side on two cores, and
    // another file's burst can stall one load past a second; such noise only ever slows a load, so each try waits
    // (a while at most) for a second in which a core is free, as a user's browser has one, and the fastest of a few
    // tries is the page's own time. A console that is slow on a quiet machine fails every try.
    const times: number[] = []
    for (let tries = 0; tries < 5 && !times.some((ms) => ms < 1000); tries++) {
      await waitForQuiet(0.5, 15_000)
      const context = await browser.newContext()
      const page = await context.newPage()
      // A tab already on Keygate's origin (a probe, nothing of the console): the browser starts the tab's renderer
      // process for the origin here, outside the time — its cost is the browser's, and under load it alone took
      // most of a second.
      await page.goto(`${dev.url}/livez`)
      const started = Date.now()
      await page.goto(`${dev.url}/console`)
      await page.getByLabel('Root key').fill('typed at once')
      times.push(Date.now() - started)
      expect(await page.getByLabel('Root key').inputValue()).toBe('typed at once')
      await context.close()
    }
    expect(Math.min(...times), `cold loads: ${times.join(', ')} ms`).toBeLessThan(1000)
  }, 120_000)

  it('passes axe-core on every page, with records on them', async () => {
    const { apiId } = await admin('apis.createApi', { name: 'billing' })
    for (const [i, owner] of ['acme', 'globex', 'initech', 'umbrella'].entries())
      await admin('keys.createKey', {
        apiId,
        name: `${owner} production`,
        externalId: owner,
        prefix: 'sk',
        ...(i % 2 ? { remaining: 1000 * (i + 1) } : {}),
        ...(i === 3 ? { enabled: false } : {}),
        ...(i === 2 ? { expires: Date.now() + 30 * 86_400_000 } : {}),
      })
    await admin('identities.createIdentity', { externalId: 'hooli', meta: { plan: 'pro' } })
    await admin('permissions.createPermission', { name: 'documents.read' })
    await admin('permissions.createRole', { name: 'reader', permissions: [{ name: 'documents.read' }] })
    await admin('ratelimits.setOverride', { namespaceName: 'email', identifier: 'acme', limit: 10, duration: 60_000 })
    await admin('rootKeys.createRootKey', { name: 'ci', permissions: ['api.*.read_key'] })
    const { endpointId } = await admin('webhooks.createEndpoint', {
      url: NOWHERE,
      description: 'billing events',
      eventTypes: ['key.created', 'key.deleted'],
      enabled: false,
    })

    const page = await signedIn()
    const problems = watchProblems(page)
    await expectAccessible(page, 'Apis')
    await page.getByRole('link', { name: 'billing' }).click()
    await page.getByRole('heading', { level: 1, name: 'Keys of billing' }).waitFor()
    await page.locator('table.keys tbody tr').nth(3).waitFor()
    await expectAccessible(page, 'Keys')
    await page.locator('table.keys').screenshot({ path: screenshotPath('console-keys.png') })
    await page.getByRole('link', { name: 'acme production' }).click()
    await page.getByRole('heading', { level: 1, name: 'Key acme production' }).waitFor()
    await page.getByRole('button', { name: 'Edit key' }).click()
    await expectAccessible(page, 'Key, editing')
    await open(page, 'Overview')
    await usageSummary(page)
    await expectAccessible(page, 'Overview')
    await open(page, 'Identities')
    await page.getByRole('link', { name: 'hooli' }).click()
    await page.getByRole('heading', { level: 1, name: 'Identity hooli' }).waitFor()
    await usageSummary(page)
    await expectAccessible(page, 'Identity')
    for (const [link, heading] of [
      ['Identities', 'Identities'],
      ['Permissions', 'Permissions'],
      ['Roles', 'Roles'],
      ['Rate limits', 'Rate limits'],
      ['Root keys', 'Root keys'],
      ['Webhooks', 'Webhooks'],
      ['Audit log', 'Audit log'],
    ] as const) {
      await open(page, link, heading)
      await page.locator('table tbody tr').first().waitFor()
      await expectAccessible(page, link)
    }
    await open(page, 'Rate limits')
    await page.getByRole('link', { name: 'email' }).click()
    await page.getByRole('heading', { level: 1, name: 'Namespace email' }).waitFor()
    await page.locator('table tbody tr').first().waitFor()
    await expectAccessible(page, 'Namespace')
    await page.goto(`${dev.url}/console#/webhooks/${endpointId}`)
    await page.getByRole('heading', { level: 1, name: `Endpoint ${NOWHERE}` }).waitFor()
    await page.getByRole('button', { name: 'Edit endpoint' }).click()
    await expectAccessible(page, 'Endpoint, editing')
    await page.getByRole('button', { name: 'Rotate secret' }).click()
    await expectAccessible(page, 'Endpoint, rotating')
    expect(problems).toEqual([])
  }, 90_000)

  it('creates a key by keyboard alone, and the new key is focused to copy', async () => {
    const { apiId } = await admin('apis.createApi', { name: 'keyboard' })
    const page = await signedIn()
    await page.goto(`${dev.url}/console#/apis/${apiId}`)
    await page.getByRole('heading', { level: 1, name: 'Keys of keyboard' }).waitFor()
    // From the page's heading (focused when it opened), Tab until the Name field has focus: no pointer anywhere.
    // Page code as text: the tests are type-checked without the DOM's types.
    const focusedLabel = () => page.evaluate<string>("document.activeElement?.labels?.[0]?.textContent ?? ''")
    for (let presses = 0; (await focusedLabel()) !== 'Name'; presses++) {
      expect(presses, 'Tab presses to reach the Name field').toBeLessThan(30)
      await page.keyboard.press('Tab')
    }
    await page.keyboard.type('typed by keyboard')
    await page.keyboard.press('Enter')
    const shown = page.getByLabel('New key', { exact: true })
    await shown.waitFor()
    // Focus moves once the key is on screen (an effect after the render): poll rather than read it at once.
    const shownId = await shown.getAttribute('id')
    await expect.poll(() => page.evaluate<string>('document.activeElement?.id')).toBe(shownId)
    const key = await shown.inputValue()
    await page.keyboard.press('Tab')
    await page.keyboard.press('Enter')
    await page.getByText(/Copied to the clipboard|the key is selected/).waitFor()
    const listed = (await (
      await fetch(`${dev.url}/v1/apis.listKeys?apiId=${apiId}`, { headers: { authorization: `Bearer ${rootKey}` } })
    ).json()) as { keys: unknown[] }
    expect(listed.keys).toEqual([expect.objectContaining({ name: 'typed by keyboard' })])
    expect(key).toMatch(/^[1-9A-HJ-NP-Za-km-z]{16,}_[1-9A-HJ-NP-Za-km-z]{6}$/)
  })

  it('shows attacker-controlled names and meta as text: nothing runs, no element is made from them', async () => {
    const { apiId } = await admin('apis.createApi', { name: XSS })
    const { keyId } = await admin('keys.createKey', {
      apiId,
      name: XSS,
      externalId: XSS,
      meta: { note: XSS, [XSS]: 1 },
    })
    await admin('keys.updateKey', { keyId, name: `${XSS} renamed` })
    const page = await signedIn()
    const problems = watchProblems(page)
    const clean = async (where: string) => {
      // Enough for an image load (and its onerror) to have happened, had an element been made.
      await page.waitForTimeout(300)
      expect(await page.evaluate<number | undefined>('window.__xss'), where).toBeUndefined()
      expect(await page.locator('img').count(), where).toBe(0)
    }
    await expect.poll(() => page.getByText(XSS, { exact: true }).count()).toBeGreaterThan(0)
    await clean('apis')
    await page.getByRole('link', { name: XSS, exact: true }).click()
    await page.getByRole('heading', { level: 1, name: `Keys of ${XSS}` }).waitFor()
    // The tab's title is set in an effect, after the heading is drawn: waited for, not read at once.
    await expect.poll(() => page.title()).toBe(`Keys of ${XSS} · Keygate console`)
    await page.getByRole('link', { name: `${XSS} renamed` }).waitFor()
    await clean('keys')
    await page.getByRole('searchbox', { name: 'Search keys' }).fill('<img')
    await page.getByRole('button', { name: 'Search', exact: true }).click()
    await page.getByText('1 matching among 1 key searched.').waitFor()
    await page.getByRole('link', { name: `${XSS} renamed` }).click()
    const meta = page.locator('dl.fields pre')
    await meta.waitFor()
    expect(JSON.parse(await meta.innerText())).toEqual({ note: XSS, [XSS]: 1 })
    await clean('key')
    await open(page, 'Audit log')
    await page.getByLabel('Key id', { exact: true }).fill(keyId)
    await page.getByRole('button', { name: 'Filter' }).click()
    // The unfiltered log stays on screen until the filtered one comes: wait for rows of this key only (its create and
    // update), or the summaries counted below may be the old table's.
    const keyCells = page.locator('table.audit tbody tr td:nth-child(5)')
    await expect
      .poll(async () => {
        const keys = await keyCells.allInnerTexts()
        return keys.length >= 2 && keys.every((shown) => shown === keyId)
      })
      .toBe(true)
    for (const summary of await page.locator('table.audit summary').all()) await summary.click()
    // The records before and after, as JSON text (its quotes escaped): the name is there, as text.
    const shownRecords = page.locator('table.audit pre', { hasText: '"name": "<img src=x onerror=' })
    await expect.poll(() => shownRecords.count()).toBeGreaterThan(1)
    await clean('audit')
    expect(problems).toEqual([])
  }, 60_000)

  it('marks a key reported leaked on the keys table and its page, where it leaked shown as text', async () => {
    const { apiId } = await admin('apis.createApi', { name: 'leaky api' })
    const { keyId, key } = await admin('keys.createKey', { apiId, name: 'leaked one' })
    await admin('keys.createKey', { apiId, name: 'safe one' })
    const where = 'javascript:window.__xss=1'
    await admin('keys.reportLeak', { key, url: where, source: XSS })
    const page = await signedIn()
    const problems = watchProblems(page)
    await page.goto(`${dev.url}/console#/apis/${apiId}`)
    const leakedRow = page.getByRole('row', { name: /leaked one/ })
    await leakedRow.getByText('leaked', { exact: true }).waitFor()
    expect(await leakedRow.getByText('disabled', { exact: true }).count()).toBe(1)
    expect(
      await page
        .getByRole('row', { name: /safe one/ })
        .getByText('leaked', { exact: true })
        .count(),
    ).toBe(0)
    await leakedRow.getByRole('link', { name: 'leaked one' }).click()
    const shown = page.locator('dl.fields', { hasText: 'reported by' })
    await shown.waitFor()
    expect(await shown.innerText()).toContain(`at ${where} (${XSS})`)
    expect(await shown.innerText()).toContain('reported by rootkey:')
    // The place is text: no link to it, nothing run from it.
    expect(await page.locator(`a[href^="javascript:"]`).count()).toBe(0)
    await page.waitForTimeout(300)
    expect(await page.evaluate<number | undefined>('window.__xss')).toBeUndefined()
    expect(await page.locator('img').count()).toBe(0)
    await expectAccessible(page, 'a leaked key')
    expect(problems).toEqual([])
    expect(keyId).toMatch(/^key_/)
  }, 60_000)

  it('says in words what a root key may not do (403), instead of breaking', async () => {
    const { apiId } = await admin('apis.createApi', { name: 'guarded' })
    const { key } = await admin('rootKeys.createRootKey', { name: 'reader', permissions: ['api.*.read_api'] })
    const page = await signedIn(key)
    await page.getByRole('link', { name: 'guarded' }).click()
    await expect
      .poll(() => page.getByRole('alert').allInnerTexts())
      .toContain(`This root key may not do that: the root key needs api.${apiId}.read_key.`)
    await page.getByLabel('Name', { exact: true }).fill('not allowed')
    await page.getByRole('button', { name: 'Create key' }).click()
    await expect
      .poll(() => page.getByRole('alert').allInnerTexts())
      .toContain(`This root key may not do that: the root key needs api.${apiId}.create_key.`)
    await expectAccessible(page, 'a 403')
  })

  it('saves only the fields an edit changed: a key disabled meanwhile stays so, an expiry keeps its seconds', async () => {
    const { apiId } = await admin('apis.createApi', { name: 'edited' })
    // Seconds and milliseconds the form's datetime-local field (to the minute) cannot show.
    const expires = Date.now() + 30 * 86_400_000 + 12_345
    await admin('permissions.createRole', { name: 'support' })
    const { keyId } = await admin('keys.createKey', { apiId, name: 'before', roles: ['support'], expires })
    const page = await signedIn()
    await page.goto(`${dev.url}/console#/keys/${keyId}`)
    await page.getByRole('heading', { level: 1, name: 'Key before' }).waitFor()
    // The form is filled while the key is enabled; the key is disabled from its page before the form is saved.
    await page.getByRole('button', { name: 'Edit key' }).click()
    await page.getByRole('button', { name: 'Disable key' }).click()
    await page.getByRole('button', { name: 'Enable key' }).waitFor()
    await page.getByLabel('Name', { exact: true }).fill('renamed')
    expect(await saveEdit(page)).toBe('Saved.')
    expect(await getKey(keyId)).toMatchObject({ name: 'renamed', enabled: false, expires, roles: ['support'] })
    await page.getByRole('heading', { level: 1, name: 'Key renamed' }).waitFor()
    await page.getByRole('button', { name: 'Edit key' }).click()
    expect(await saveEdit(page)).toBe('Nothing to save: no field was changed.')
    await page.context().close()
  })

  it("sets and removes an identity's usage thresholds from its page, as identities.getIdentity then shows them", async () => {
    const { identityId } = await admin('identities.createIdentity', { externalId: 'metered' })
    const thresholdsOf = async () => {
      const answer = await fetch(`${dev.url}/v1/identities.getIdentity?identityId=${identityId}`, {
        headers: { authorization: `Bearer ${rootKey}` },
      })
      return ((await answer.json()) as { usageThresholds?: unknown }).usageThresholds
    }
    const page = await signedIn()
    await page.goto(`${dev.url}/console#/identities/${identityId}`)
    await page.getByRole('heading', { level: 1, name: 'Identity metered' }).waitFor()
    const form = page.getByRole('form', { name: 'Add a usage threshold' })
    await form.getByLabel('Counting').selectOption('credits')
    await form.getByLabel('Over').selectOption('day')
    await form.getByLabel('At').fill('500')
    await form.getByRole('button', { name: 'Add threshold' }).click()
    await page.getByText('Added: 500 credits spent in a UTC day.').waitFor()
    expect(await thresholdsOf()).toEqual([{ measure: 'credits', period: 'day', value: 500 }])
    await page.getByRole('listitem').filter({ hasText: '500 credits spent in a UTC day' }).waitFor()
    await expectAccessible(page, "an identity's page with a usage threshold")
    await page.getByRole('button', { name: 'Remove 500 credits spent in a UTC day' }).click()
    await page.getByText('Removed: 500 credits spent in a UTC day.').waitFor()
    expect(await thresholdsOf()).toBeUndefined()
    // A meter export: the page says whom the identity is billed as there, or which meta field it lacks.
    const { apiId } = await admin('apis.createApi', { name: 'billed' })
    const { endpointId } = await admin('webhooks.createEndpoint', {
      url: NOWHERE,
      apiIds: [apiId],
      export: { provider: 'stripe', meter: 'api_calls', customerField: 'stripeCustomerId', credential: 'sk_test_x' },
    })
    try {
      await page.reload()
      const exports = page.getByRole('region', { name: 'Meter exports' })
      await exports.getByText('no meta.stripeCustomerId').waitFor()
      expect(await exports.getByRole('link', { name: 'stripe: api_calls' }).getAttribute('href')).toBe(
        `#/webhooks/${endpointId}`,
      )
      await admin('identities.updateIdentity', { identityId, meta: { stripeCustomerId: 'cus_metered' } })
      await page.reload()
      await exports.getByText('cus_metered').waitFor()
      await expectAccessible(page, "an identity's page with its meter exports")
    } finally {
      await admin('webhooks.deleteEndpoint', { endpointId })
    }
    await page.context().close()
  })

  it('renames a key that holds roles with a root key that may only update keys (roles unchanged are not sent)', async () => {
    const { apiId } = await admin('apis.createApi', { name: 'renamed by an updater' })
    await admin('permissions.createRole', { name: 'billing-admin' })
    const { keyId } = await admin('keys.createKey', { apiId, name: 'holds roles', roles: ['billing-admin'] })
    const { key: updater } = await admin('rootKeys.createRootKey', {
      name: 'updater',
      permissions: ['api.*.read_key', 'api.*.update_key'],
    })
    const page = await signedIn(updater)
    await page.goto(`${dev.url}/console#/keys/${keyId}`)
    await page.getByRole('heading', { level: 1, name: 'Key holds roles' }).waitFor()
    await page.getByRole('button', { name: 'Edit key' }).click()
    await page.getByLabel('Name', { exact: true }).fill('renamed by an updater')
    expect(await saveEdit(page)).toBe('Saved.')
    expect(await getKey(keyId)).toMatchObject({ name: 'renamed by an updater', roles: ['billing-admin'] })
    await page.context().close()
  })

  it('keeps a bulk selection to the keys on screen: another page or a search starts with none selected', async () => {
    const { apiId } = await admin('apis.createApi', { name: 'bulk' })
    // 51 keys: two pages of the keys table (50 a page).
    for (let i = 0; i < 51; i++) await admin('keys.createKey', { apiId, name: `bulk ${String(i).padStart(2, '0')}` })
    const page = await signedIn()
    await page.goto(`${dev.url}/console#/apis/${apiId}`)
    await page.getByRole('heading', { level: 1, name: 'Keys of bulk' }).waitFor()
    const rows = page.locator('table.keys tbody tr')
    await rows.nth(49).waitFor()
    const disableSelected = page.getByRole('button', { name: 'Disable selected' })
    const deleteSelected = page.getByRole('button', { name: 'Delete selected' })
    const selectFirstRow = async () => {
      await rows.first().getByRole('checkbox').check()
      await page.getByText('1 selected').waitFor()
      return rows.first().locator('td.mono').first().innerText()
    }

    const onFirstPage = await selectFirstRow()
    await page.getByRole('button', { name: 'Next page' }).click()
    await page.getByText('Page 2').waitFor()
    await rows.nth(1).waitFor({ state: 'detached' })
    expect(await disableSelected.isDisabled()).toBe(true)
    expect(await deleteSelected.isDisabled()).toBe(true)
    // What the bulk action then reaches: the key selected on this page, none left behind on the first.
    const onSecondPage = await selectFirstRow()
    await disableSelected.click()
    await page.getByText('Disabled 1 of 1 keys.').waitFor()
    expect((await getKey(onSecondPage)).enabled).toBe(false)
    expect((await getKey(onFirstPage)).enabled).toBe(true)

    await page.getByRole('button', { name: 'Previous page' }).click()
    await page.getByText('Page 1').waitFor()
    await rows.nth(49).waitFor()
    await selectFirstRow()
    // A search that leaves the selected key off screen: the name of the next row.
    const other = await rows.nth(1).getByRole('link').innerText()
    await page.getByRole('searchbox', { name: 'Search keys' }).fill(other)
    await page.getByRole('button', { name: 'Search', exact: true }).click()
    await page.getByText('1 matching among 51 keys searched.').waitFor()
    expect(await rows.getByRole('link').allInnerTexts()).toEqual([other])
    expect(await deleteSelected.isDisabled()).toBe(true)
    expect(await disableSelected.isDisabled()).toBe(true)
    expect(await page.getByText(/\d+ selected/).count()).toBe(0)
    await page.context().close()
  })

  it('finds keys by owner (externalId), whatever its case', async () => {
    const { apiId } = await admin('apis.createApi', { name: 'owners' })
    await admin('keys.createKey', { apiId, name: 'first', externalId: 'Acme-Corp' })
    await admin('keys.createKey', { apiId, name: 'second', externalId: 'globex' })
    await admin('keys.createKey', { apiId, name: 'no owner' })
    const page = await signedIn()
    const said = () => page.locator('p[aria-live]').allInnerTexts()
    // The name and owner cells of the rows shown.
    const names = () => page.locator('table.keys tbody td.name').allInnerTexts()
    await page.goto(`${dev.url}/console#/apis/${apiId}`)
    await page.getByRole('heading', { level: 1, name: 'Keys of owners' }).waitFor()
    await page.getByRole('searchbox', { name: 'Search keys' }).fill('CORP')
    await page.getByRole('button', { name: 'Search', exact: true }).click()
    await expect.poll(said, { timeout: 10_000 }).toEqual(['1 matching among 3 keys searched.'])
    expect(await names()).toEqual(['first', 'Acme-Corp'])
    await page.getByRole('searchbox', { name: 'Search keys' }).fill('globex')
    await page.getByRole('button', { name: 'Search', exact: true }).click()
    await expect.poll(names, { timeout: 10_000 }).toEqual(['second', 'globex'])
    await page.context().close()
  })

  it('shows a page saying so for an address that does not decode, instead of a blank app', async () => {
    const page = await signedIn()
    const problems = watchProblems(page)
    const headings = () => page.getByRole('heading', { level: 1 }).allInnerTexts()
    // Followed from another page, and as the tab opens (a reload, still signed in). decodeURIComponent's URIError
    // used to escape: the first left the page before it in place, the second rendered nothing at all.
    await page.goto(`${dev.url}/console#/apis/%E0`)
    await expect.poll(headings, { timeout: 10_000 }).toEqual(['Page not found'])
    await page.reload()
    await expect.poll(headings, { timeout: 10_000 }).toEqual(['Page not found'])
    await page.getByText('The console has no page at #/apis/%E0').waitFor()
    await page.getByRole('link', { name: 'Go to the overview' }).click()
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    expect(problems).toEqual([])
    await page.context().close()
  })

  it('refuses a root key Keygate does not know, and signing out forgets the key: sessionStorage only, never a URL', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${dev.url}/console`)
    await page.getByLabel('Root key').fill('kgroot_not_a_key')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('Keygate refused the root key')
    await page.getByLabel('Root key').fill(rootKey)
    await page.getByRole('button', { name: 'Sign in' }).click()
    // The console opens on its overview.
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    const storage = () =>
      page.evaluate<{ session: string[]; local: number; cookies: string }>(
        '({ session: Object.values(sessionStorage), local: localStorage.length, cookies: document.cookie })',
      )
    expect(await storage()).toEqual({ session: [rootKey], local: 0, cookies: '' })
    // A reload of the tab keeps it signed in; a new tab does not share it.
    await page.reload()
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    const other = await browser.newContext()
    const otherPage = await other.newPage()
    await otherPage.goto(`${dev.url}/console`)
    await otherPage.getByLabel('Root key').waitFor()
    await other.close()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByLabel('Root key').waitFor()
    expect(await storage()).toEqual({ session: [], local: 0, cookies: '' })
    expect(page.url()).toBe(`${dev.url}/console`)
    await context.close()
  })

  it('deletes an api only once its exact name is typed in the dialog', async () => {
    // Deleting an api deletes its keys: the dialog's button stays disabled, and Enter does nothing, until the name
    // typed is the api's, letter for letter.
    const { apiId } = await admin('apis.createApi', { name: 'to be deleted' })
    const page = await signedIn()
    await page.getByRole('button', { name: 'Delete api to be deleted', exact: true }).click()
    const dialog = page.getByRole('dialog')
    const confirm = dialog.getByRole('button', { name: 'Delete api' })
    const typed = dialog.getByLabel('Type to be deleted to confirm')
    expect(await confirm.isDisabled()).toBe(true)
    await typed.fill('to be delete')
    expect(await confirm.isDisabled()).toBe(true)
    await typed.press('Enter')
    await typed.fill('To be deleted')
    expect(await confirm.isDisabled()).toBe(true)
    expect(await apiStatus(apiId)).toBe(200)
    await typed.fill('to be deleted')
    await confirm.click()
    await page.getByText('Deleted the api to be deleted: its keys no longer verify.').waitFor()
    expect(await apiStatus(apiId)).toBe(404)
    await page.context().close()
  })

  it('shows a new key once: not after going back to the page nor after a reload, and keeps it nowhere', async () => {
    const { apiId } = await admin('apis.createApi', { name: 'shown once' })
    const page = await signedIn()
    await page.goto(`${dev.url}/console#/apis/${apiId}`)
    await page.getByRole('heading', { level: 1, name: 'Keys of shown once' }).waitFor()
    await page.getByLabel('Name', { exact: true }).fill('once')
    await page.getByRole('button', { name: 'Create key' }).click()
    const key = await page.getByLabel('New key', { exact: true }).inputValue()
    expect(key).toMatch(/^[1-9A-HJ-NP-Za-km-z]{16,}_[1-9A-HJ-NP-Za-km-z]{6}$/)
    // Only the root key is kept (for the tab); the new key lives in the page that showed it, nowhere else.
    const stored = () => page.evaluate<string[]>('[...Object.values(sessionStorage), ...Object.values(localStorage)]')
    expect(await stored()).toEqual([rootKey])
    const gone = async (where: string) => {
      await page.getByRole('heading', { level: 1, name: 'Keys of shown once' }).waitFor()
      await page.getByRole('link', { name: 'once', exact: true }).waitFor()
      expect(await page.getByLabel('New key', { exact: true }).count(), where).toBe(0)
      expect(await page.content(), where).not.toContain(key)
    }
    // To the key's page and back with the browser's back button, as an admin checking the key would.
    await page.getByRole('link', { name: /^Open key key_/ }).click()
    await page.getByRole('heading', { level: 1, name: 'Key once' }).waitFor()
    await page.goBack()
    await gone('back on the keys page')
    await page.reload()
    await gone('after a reload')
    expect(await stored()).toEqual([rootKey])
    await page.context().close()
  })

  it('pages the audit log on its cursor: the next page holds the older entries, none twice', async () => {
    const { apiId } = await admin('apis.createApi', { name: 'audited' })
    // 51 entries of the api (apis.createApi and 50 keys.createKey): more than the 50 a page shows.
    const made: string[] = []
    for (let i = 0; i < 50; i++) made.push((await admin('keys.createKey', { apiId, name: `audited ${i}` })).keyId)
    const page = await signedIn()
    await open(page, 'Audit log')
    await page.getByLabel('Api id').fill(apiId)
    await page.getByRole('button', { name: 'Filter' }).click()
    const rows = page.locator('table.audit tbody tr')
    await rows.nth(49).waitFor()
    // Each row as "action key": the api's own entry has no key.
    const shown = async () => {
      const actions = await rows.locator('td:nth-child(2)').allInnerTexts()
      const keys = await rows.locator('td:nth-child(5)').allInnerTexts()
      return actions.map((action, i) => `${action} ${keys[i]}`.trim())
    }
    const first = await shown()
    await page.getByRole('button', { name: 'Next page' }).click()
    await page.getByText('Page 2').waitFor()
    await expect.poll(shown).not.toEqual(first)
    const second = await shown()
    expect([...first, ...second]).toEqual([
      ...[...made].reverse().map((keyId) => `keys.createKey ${keyId}`),
      'apis.createApi',
    ])
    await page.getByRole('button', { name: 'Previous page' }).click()
    await page.getByText('Page 1').waitFor()
    await expect.poll(shown).toEqual(first)
    await page.context().close()
  })

  it("links a key's page to that key's older audit entries, not to the whole log", async () => {
    const { apiId } = await admin('apis.createApi', { name: 'audited key' })
    const { keyId } = await admin('keys.createKey', { apiId, name: 'edit 0' })
    const { keyId: other } = await admin('keys.createKey', { apiId, name: 'another key' })
    // 22 entries of the key: more than the 20 its page shows.
    for (let i = 1; i <= 21; i++) await admin('keys.updateKey', { keyId, name: `edit ${i}` })
    const page = await signedIn()
    await page.goto(`${dev.url}/console#/keys/${keyId}`)
    await page.getByRole('link', { name: 'Older entries of this key in the audit log' }).click()
    await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor()
    const keyField = page.getByRole('textbox', { name: 'Key id', exact: true })
    expect(await keyField.inputValue()).toBe(keyId)
    const rows = page.locator('table.audit tbody tr')
    await rows.nth(21).waitFor()
    const keys = await rows.locator('td:nth-child(5)').allInnerTexts()
    expect(keys).toEqual(Array(22).fill(keyId))
    expect(keys).not.toContain(other)
    expect(await rows.last().locator('td:nth-child(2)').innerText()).toBe('keys.createKey')
    // The menu's Audit log is the whole log again.
    await open(page, 'Audit log')
    await expect.poll(() => keyField.inputValue()).toBe('')
    await expect.poll(() => rows.locator('td:nth-child(5)').allInnerTexts()).toContain(other)
    // Back to the key's filtered log: the route holds the key, so the back button brings the filter back too.
    await page.goBack()
    await expect.poll(() => keyField.inputValue()).toBe(keyId)
    await expect.poll(() => rows.locator('td:nth-child(5)').allInnerTexts()).toEqual(Array(22).fill(keyId))
    // The route's key is where the filter starts, not one the form cannot lift: emptied, the whole log shows.
    await keyField.fill('')
    await page.getByRole('button', { name: 'Filter', exact: true }).click()
    await expect.poll(() => rows.locator('td:nth-child(5)').allInnerTexts()).toContain(other)
    await page.context().close()
  })

  it('shows attacker-controlled names as text on the other pages too, and in the dialogs that repeat them', async () => {
    // The test above covers apis, keys and the audit log. Identities, roles, namespaces, overrides and root keys are
    // named by callers as much, and a confirm dialog repeats a name: the api's, to be typed, in its field's label.
    await admin('apis.createApi', { name: `${XSS} api` })
    await admin('identities.createIdentity', { externalId: `${XSS} identity` })
    await admin('permissions.createRole', { name: `${XSS} role`, description: XSS })
    await admin('ratelimits.setOverride', {
      namespaceName: `${XSS} ns`,
      identifier: `${XSS} who`,
      limit: 1,
      duration: 60_000,
    })
    await admin('rootKeys.createRootKey', { name: `${XSS} root`, permissions: ['api.*.read_key'] })
    // An endpoint's URL is normalised (a < in it is percent-encoded); its description is kept as given.
    const { endpointId } = await admin('webhooks.createEndpoint', {
      url: NOWHERE,
      description: `${XSS} hook`,
      enabled: false,
    })
    const page = await signedIn()
    const problems = watchProblems(page)
    const clean = async (where: string, text: string) => {
      await page.getByText(text, { exact: true }).first().waitFor()
      // Enough for an image load (and its onerror) to have happened, had an element been made.
      await page.waitForTimeout(300)
      expect(await page.evaluate<number | undefined>('window.__xss'), where).toBeUndefined()
      expect(await page.locator('img').count(), where).toBe(0)
    }
    await page.getByRole('button', { name: `Delete api ${XSS} api`, exact: true }).click()
    await page.getByRole('dialog').getByLabel(`Type ${XSS} api to confirm`).waitFor()
    await clean('the delete dialog of an api', `${XSS} api`)
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click()
    await open(page, 'Identities')
    await clean('identities', `${XSS} identity`)
    await open(page, 'Roles')
    await clean('roles', `${XSS} role`)
    await open(page, 'Rate limits')
    await clean('namespaces', `${XSS} ns`)
    await page.getByRole('link', { name: `${XSS} ns`, exact: true }).click()
    await page.getByRole('heading', { level: 1, name: `Namespace ${XSS} ns` }).waitFor()
    await clean('overrides', `${XSS} who`)
    await open(page, 'Root keys')
    await clean('root keys', `${XSS} root`)
    await page.getByRole('button', { name: `Revoke root key ${XSS} root`, exact: true }).click()
    await page
      .getByRole('dialog')
      .getByRole('heading', { name: `Revoke the root key ${XSS} root?` })
      .waitFor()
    await clean('the revoke dialog of a root key', `Revoke the root key ${XSS} root?`)
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click()
    await open(page, 'Webhooks')
    await clean('webhooks', `${XSS} hook`)
    await page.goto(`${dev.url}/console#/webhooks/${endpointId}`)
    await page.getByRole('heading', { level: 1, name: `Endpoint ${NOWHERE}` }).waitFor()
    await clean('an endpoint', `${XSS} hook`)
    await page.getByRole('button', { name: 'Edit endpoint' }).click()
    expect(await page.getByLabel('Description', { exact: true }).inputValue()).toBe(`${XSS} hook`)
    await clean('an endpoint, editing', `${XSS} hook`)
    expect(problems).toEqual([])
    await page.context().close()
  }, 60_000)

  it('reaches the Create key button by Tab and presses it, not only Enter in a field', async () => {
    // Enter in a field submits the form even when its button cannot take focus: a keyboard user who tabs through
    // the form must land on the button itself, and pressing it makes the key.
    const { apiId } = await admin('apis.createApi', { name: 'tabbed' })
    const page = await signedIn()
    await page.goto(`${dev.url}/console#/apis/${apiId}`)
    await page.getByRole('heading', { level: 1, name: 'Keys of tabbed' }).waitFor()
    await page.getByLabel('Name', { exact: true }).focus()
    await page.keyboard.type('tabbed key')
    // Page code as text: the tests are type-checked without the DOM's types.
    const focused = () =>
      page.evaluate<string>("document.activeElement?.tagName + ' ' + document.activeElement?.textContent?.trim()")
    for (let presses = 0; (await focused()) !== 'BUTTON Create key'; presses++) {
      expect(presses, 'Tab presses from Name to the Create key button').toBeLessThan(20)
      await page.keyboard.press('Tab')
    }
    await page.keyboard.press('Enter')
    await page.getByLabel('New key', { exact: true }).waitFor()
    const listed = (await (
      await fetch(`${dev.url}/v1/apis.listKeys?apiId=${apiId}`, { headers: { authorization: `Bearer ${rootKey}` } })
    ).json()) as { keys: unknown[] }
    expect(listed.keys).toEqual([expect.objectContaining({ name: 'tabbed key' })])
    await page.context().close()
  })

  describe('usage, read from the analytics engine', () => {
    /** Verifications of this api only, read with a root key that reads this api's usage only: no other test's count. */
    let apiId: string
    let reader: string
    const keys = { busy: '', limited: '', spent: '', off: '' }
    /** A tag a SQL string would have to escape: a quote, a backslash, double quotes. */
    const TAGGED = 'it\'s \\ "quoted"'
    const GLOBEX = `${XSS} globex`

    beforeAll(async () => {
      ;({ apiId } = await admin('apis.createApi', { name: 'usage' }))
      const made = {
        busy: await admin('keys.createKey', { apiId, name: 'busy', externalId: 'acme' }),
        limited: await admin('keys.createKey', {
          apiId,
          name: 'limited',
          externalId: GLOBEX,
          ratelimit: { limit: 1, duration: 60_000, async: false },
        }),
        spent: await admin('keys.createKey', { apiId, name: 'spent', remaining: 1 }),
        off: await admin('keys.createKey', { apiId, name: 'off', externalId: 'acme', enabled: false }),
      }
      for (const name of Object.keys(keys) as (keyof typeof keys)[]) keys[name] = made[name].keyId as string
      const codes = async (key: string, tagsOfEach: string[][]) => {
        const said: string[] = []
        for (const tags of tagsOfEach) said.push((await verify(key, tags)).code)
        return said
      }
      await clearOfWindowEdge(60_000)
      const busy = await codes(made.busy.key, [['path=/a'], ['path=/a', 'beta'], [TAGGED], []])
      expect(busy).toEqual(['VALID', 'VALID', 'VALID', 'VALID'])
      const limited = await codes(made.limited.key, [['path=/a'], ['path=/a'], ['path=/a']])
      expect(limited).toEqual(['VALID', 'RATE_LIMITED', 'RATE_LIMITED'])
      expect(await codes(made.spent.key, [[], []])).toEqual(['VALID', 'USAGE_EXCEEDED'])
      expect(await codes(made.off.key, [[]])).toEqual(['DISABLED'])
      ;({ key: reader } = await admin('rootKeys.createRootKey', {
        name: 'usage reader',
        permissions: [
          `api.${apiId}.read_analytics`,
          `api.${apiId}.read_api`,
          `api.${apiId}.read_key`,
          'identity.*.read_identity',
        ],
      }))
      await waitForIngested(dev.url, rootKey, apiId, 10)
    }, 60_000)

    /** A table's rows, each as its cells' texts. */
    const rowsOf = async (page: Page, table: string) => {
      const rows = page.getByRole('table', { name: table }).locator('tbody tr')
      await rows.first().waitFor()
      return Promise.all((await rows.all()).map((row) => row.locator('td').allInnerTexts()))
    }

    it('opens on an overview of what the root key may read: outcomes over time, busiest keys and identities, refusals', async () => {
      // Every outcome, a query each over the rollups: the engine itself counts them (the route scopes them to the api).
      expect(
        await analytics(
          `SELECT outcome, sum(count) AS n FROM key_verifications_per_day_v1 WHERE key_space_id = '${apiId}' GROUP BY outcome ORDER BY outcome`,
        ),
      ).toEqual([
        { outcome: 'DISABLED', n: 1 },
        { outcome: 'RATE_LIMITED', n: 2 },
        { outcome: 'USAGE_EXCEEDED', n: 1 },
        { outcome: 'VALID', n: 6 },
      ])
      const page = await signedIn(reader, undefined, OVERVIEW)
      const problems = watchProblems(page)
      const busiest = [
        [keys.busy, apiId, '4', '0'],
        [keys.limited, apiId, '3', '2'],
        [keys.spent, apiId, '2', '1'],
        [keys.off, apiId, '1', '1'],
      ]
      for (const range of ['Last 24 hours', 'Last 30 days']) {
        await page.getByRole('button', { name: range }).click()
        expect(await usageSummary(page)).toBe(`${range}: 6 valid, 2 rate limited, 1 usage exceeded, 1 disabled`)
        expect(await rowsOf(page, 'Busiest keys')).toEqual(busiest)
        expect(await rowsOf(page, 'Busiest identities')).toEqual([
          ['acme', '5', '1'],
          [GLOBEX, '3', '2'],
        ])
        expect(await rowsOf(page, 'Refusals by reason')).toEqual([
          ['Rate limited', '2'],
          ['Disabled', '1'],
          ['Usage exceeded', '1'],
        ])
      }
      await page.getByRole('button', { name: 'Last 24 hours' }).click()
      await usageSummary(page)
      await expect.poll(() => page.locator('main canvas').count()).toBeGreaterThan(0)
      // An externalId is shown as text: nothing runs, no element is made of it.
      expect(await page.evaluate<number | undefined>('window.__xss')).toBeUndefined()
      expect(await page.locator('img').count()).toBe(0)
      await expectAccessible(page, 'the overview')
      await page.locator('main').screenshot({ path: screenshotPath('console-overview.png') })

      // Its rows lead to the key's page and the identity's, each charting its own usage.
      await page.getByRole('link', { name: keys.limited }).click()
      await page.getByRole('heading', { level: 1, name: 'Key limited' }).waitFor()
      expect(await usageSummary(page)).toBe('Last 24 hours: 1 valid, 2 rate limited')
      await page.goBack()
      await page.getByRole('link', { name: 'acme', exact: true }).click()
      await page.getByRole('heading', { level: 1, name: 'Identity acme' }).waitFor()
      expect(await usageSummary(page)).toBe('Last 24 hours: 4 valid, 1 disabled')
      await expectAccessible(page, "an identity's page")
      // The key's page also lists its audit entries, which this root key may not read (403, said on the page).
      expect(problems.filter((problem) => !problem.includes('status of 403'))).toEqual([])
      await page.context().close()
    }, 60_000)

    it("charts a key's and an api's usage by every outcome, narrowed to a tag typed with quotes and backslashes", async () => {
      const page = await signedIn(reader, undefined, { hash: `#/keys/${keys.busy}`, heading: 'Key busy' })
      const problems = watchProblems(page)
      expect(await usageSummary(page)).toBe('Last 24 hours: 4 valid')
      const filter = async (tag: string) => {
        await page.getByLabel('Tag', { exact: true }).fill(tag)
        await page.getByRole('button', { name: 'Filter by tag' }).click()
      }
      await filter('path=/a')
      await expect.poll(() => usageSummary(page)).toBe('Last 24 hours, tagged "path=/a": 2 valid')
      await filter(TAGGED)
      await expect.poll(() => usageSummary(page)).toBe(`Last 24 hours, tagged "${TAGGED}": 1 valid`)
      await page.getByRole('button', { name: 'Last 30 days' }).click()
      await expect.poll(() => usageSummary(page)).toBe(`Last 30 days, tagged "${TAGGED}": 1 valid`)
      // SQL typed as a tag is a tag no verification carried.
      await filter("beta') OR ('1'='1")
      await expect.poll(() => usageSummary(page)).toBe(`Last 30 days, tagged "beta') OR ('1'='1": no verifications`)
      await page.getByRole('button', { name: 'Every tag' }).click()
      await expect.poll(() => usageSummary(page)).toBe('Last 30 days: 4 valid')
      // A control character is refused where it is typed: nothing is sent.
      await page.getByLabel('Tag', { exact: true }).fill('a\tb')
      await page.getByText('A tag cannot hold a line break, a tab or another control character.').waitFor()
      expect(await page.getByRole('button', { name: 'Filter by tag' }).isDisabled()).toBe(true)
      await expectAccessible(page, "a key's usage, its tag refused")

      await page.goto(`${dev.url}/console#/apis/${apiId}`)
      await page.getByRole('heading', { level: 1, name: 'Keys of usage' }).waitFor()
      expect(await usageSummary(page)).toBe('Last 24 hours: 6 valid, 2 rate limited, 1 usage exceeded, 1 disabled')
      await filter('path=/a')
      await expect.poll(() => usageSummary(page)).toBe('Last 24 hours, tagged "path=/a": 3 valid, 2 rate limited')
      await expectAccessible(page, "an api's usage")
      // The key's page lists its audit entries, which this root key may not read: a 403 logged as the page opens, or
      // (on a loaded machine) just after the watch began.
      expect(problems.filter((problem) => !problem.includes('status of 403'))).toEqual([])
      await page.context().close()
    }, 60_000)

    it("counts a range from that range's answer, not from the other range's while it loads", async () => {
      // Today's day bucket starts at 00:00 UTC, as an hour bucket does: the month's answer, read as the day's, put
      // today's total at midnight and summed it as the last 24 hours' until the day's answer came.
      const page = await signedIn(reader, undefined, { hash: `#/keys/${keys.spent}`, heading: 'Key spent' })
      const summary = page.getByTestId('usage-summary')
      await page.getByRole('button', { name: 'Last 30 days' }).click()
      await expect.poll(() => summary.innerText()).toBe('Last 30 days: 1 valid, 1 usage exceeded')
      // The day's answer is held back: meanwhile the chart has nothing of its own to show.
      let release = () => {}
      const held = new Promise<void>((resolve) => (release = resolve))
      await page.route('**/v2/analytics.getVerifications', async (route) => {
        if (route.request().postData()?.includes('key_verifications_per_hour_v1')) await held
        await route.continue()
      })
      await page.getByRole('button', { name: 'Last 24 hours' }).click()
      await expect.poll(() => summary.innerText()).toBe('Last 24 hours: loading')
      expect(await page.locator('.usage canvas').count()).toBe(0)
      release()
      await expect.poll(() => summary.innerText()).toBe('Last 24 hours: 1 valid, 1 usage exceeded')
      await page.context().close()
    })
  })

  it('says usage is not shown to a root key that may not read analytics, and the rest of the console works', async () => {
    const { apiId } = await admin('apis.createApi', { name: 'unmetered' })
    await admin('keys.createKey', { apiId, name: 'unmetered key' })
    const { key } = await admin('rootKeys.createRootKey', {
      name: 'no analytics',
      permissions: ['api.*.read_api', 'api.*.read_key'],
    })
    const page = await signedIn(key, undefined, OVERVIEW)
    const said =
      'Usage is not shown: this root key may not read analytics. A root key with api.*.read_analytics ' +
      '(or api.<apiId>.read_analytics, for one api) sees it.'
    const unavailable = page.getByTestId('usage-unavailable')
    await expect.poll(() => unavailable.innerText()).toBe(said)
    expect(await page.getByRole('alert').count()).toBe(0)
    await expectAccessible(page, 'the overview, analytics refused')
    await open(page, 'Apis')
    await page.getByRole('link', { name: 'unmetered', exact: true }).click()
    await page.getByRole('heading', { level: 1, name: 'Keys of unmetered' }).waitFor()
    await expect.poll(() => unavailable.innerText()).toBe(said)
    await page.getByRole('link', { name: 'unmetered key' }).click()
    await page.getByRole('heading', { level: 1, name: 'Key unmetered key' }).waitFor()
    await page.getByRole('button', { name: 'Disable key' }).waitFor()
    await expect.poll(() => unavailable.innerText()).toBe(said)
    await page.context().close()
  })

  it('creates a webhook endpoint by keyboard alone: event types are checkboxes, the secret is focused to copy', async () => {
    const page = await signedIn()
    await open(page, 'Webhooks')
    // Page code as text: the tests are type-checked without the DOM's types.
    const focusedLabel = () => page.evaluate<string>("document.activeElement?.labels?.[0]?.textContent ?? ''")
    const tabTo = async (label: string) => {
      for (let presses = 0; (await focusedLabel()) !== label; presses++) {
        expect(presses, `Tab presses to reach ${label}`).toBeLessThan(40)
        await page.keyboard.press('Tab')
      }
    }
    await tabTo('URL')
    await page.keyboard.type(NOWHERE)
    await tabTo('rootKey.rolled')
    await page.keyboard.press('Space')
    const focused = () =>
      page.evaluate<string>("document.activeElement?.tagName + ' ' + document.activeElement?.textContent?.trim()")
    for (let presses = 0; (await focused()) !== 'BUTTON Create endpoint'; presses++) {
      expect(presses, 'Tab presses to the Create endpoint button').toBeLessThan(5)
      await page.keyboard.press('Tab')
    }
    await page.keyboard.press('Enter')
    const shown = page.getByLabel('Signing secret', { exact: true })
    await shown.waitFor()
    const shownId = await shown.getAttribute('id')
    await expect.poll(() => page.evaluate<string>('document.activeElement?.id')).toBe(shownId)
    expect(await shown.inputValue()).toMatch(/^whsec_/)
    const opened = await page.getByRole('link', { name: /^Open the endpoint whep_/ }).innerText()
    const endpointId = opened.replace('Open the endpoint ', '')
    expect(await getEndpoint(endpointId)).toMatchObject({ url: NOWHERE, eventTypes: ['rootKey.rolled'], enabled: true })
    await admin('webhooks.deleteEndpoint', { endpointId })
    await page.context().close()
  })

  it('edits an endpoint with what changed only: a cleared description is cleared, no type checked is every type, apis scope it', async () => {
    const { endpointId } = await admin('webhooks.createEndpoint', {
      url: NOWHERE,
      description: 'before',
      eventTypes: ['key.created'],
      enabled: false,
    })
    const page = await signedIn()
    await page.goto(`${dev.url}/console#/webhooks/${endpointId}`)
    await page.getByRole('heading', { level: 1, name: `Endpoint ${NOWHERE}` }).waitFor()
    const edit = async (change: () => Promise<void>, said: string) => {
      await page.getByRole('button', { name: 'Edit endpoint' }).click()
      // Opening the form clears what the last save said: the answer awaited below is this save's, not the last one's.
      for (const before of ['Saved.', 'Nothing to save: no field was changed.'])
        await page.getByText(before, { exact: true }).waitFor({ state: 'detached' })
      await change()
      await page.getByRole('button', { name: 'Save changes' }).click()
      // What the page then says: that it saved (or had nothing to), or the form's error.
      const answer = page
        .getByText(said, { exact: true })
        .or(page.getByRole('form', { name: 'Edit the endpoint' }).getByRole('alert'))
      await answer.first().waitFor()
      expect(await answer.first().innerText()).toBe(said)
    }
    await edit(async () => {
      await page.getByLabel('Description', { exact: true }).fill('')
      await page.getByRole('checkbox', { name: 'key.created', exact: true }).uncheck()
      await page.getByRole('checkbox', { name: 'identity.created', exact: true }).check()
    }, 'Saved.')
    const edited = await getEndpoint(endpointId)
    expect(edited).toMatchObject({ url: NOWHERE, eventTypes: ['identity.created'], enabled: false })
    expect(edited).not.toHaveProperty('description')
    await edit(async () => {}, 'Nothing to save: no field was changed.')
    await edit(() => page.getByRole('checkbox', { name: 'identity.created', exact: true }).uncheck(), 'Saved.')
    expect(await getEndpoint(endpointId)).toMatchObject({ eventTypes: [] })
    await page.locator('dl.fields').getByText('every type', { exact: true }).waitFor()
    // Scoped to an api: only its key events from now on.
    const { apiId } = await admin('apis.createApi', { name: 'scoped endpoint' })
    await edit(() => page.getByLabel('Apis', { exact: true }).fill(` ${apiId}, `), 'Saved.')
    expect(await getEndpoint(endpointId)).toMatchObject({ apiIds: [apiId] })
    await page.locator('dl.fields').getByText(apiId, { exact: true }).waitFor()
    await page.context().close()
  })

  it('fits the webhook pages in a phone’s width: the table scrolls in its own region, the page does not', async () => {
    await admin('webhooks.createEndpoint', {
      url: `${NOWHERE}/a-long-path-that-a-phone-cannot-show-on-one-line`,
      description: 'the billing service of the eu-west-1 region, production',
      eventTypes: ['key.created', 'key.credits.exhausted', 'identity.deleted'],
      enabled: false,
    })
    const page = await signedIn(rootKey, { width: 390, height: 844 })
    const problems = watchProblems(page)
    // Page code as text: the tests are type-checked without the DOM's types.
    const pageWidth = () => page.evaluate<number>('document.documentElement.scrollWidth')
    await open(page, 'Webhooks')
    await page.getByLabel('URL', { exact: true }).fill(NOWHERE)
    await page.getByRole('checkbox', { name: 'rootKey.rolled', exact: true }).check()
    await page.getByRole('button', { name: 'Create endpoint' }).click()
    await page.getByLabel('Signing secret', { exact: true }).waitFor()
    await page.locator('table tbody tr').first().waitFor()
    expect(await pageWidth(), 'the Webhooks page, a secret shown').toBeLessThanOrEqual(390)
    await expectAccessible(page, 'Webhooks at 390 px')
    // The row's last button is reached by scrolling the table's region, and works.
    const region = page.getByRole('region', { name: 'Webhook endpoints' })
    const scrolls = await region.evaluate((element) => {
      const box = element as unknown as { scrollWidth: number; clientWidth: number }
      return box.scrollWidth > box.clientWidth
    })
    expect(scrolls, 'the table is wider than the phone').toBe(true)
    await page
      .getByRole('button', { name: /^Delete endpoint / })
      .first()
      .click()
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click()
    await page.getByRole('link', { name: /a-long-path/ }).click()
    await page.getByRole('heading', { level: 1, name: /^Endpoint / }).waitFor()
    await page.getByRole('button', { name: 'Edit endpoint' }).click()
    expect(await pageWidth(), "an endpoint's page, editing").toBeLessThanOrEqual(390)
    await expectAccessible(page, 'an endpoint at 390 px')
    expect(problems).toEqual([])
    await page.context().close()
  })

  it('says in words what a root key may not do on the Webhooks page (403)', async () => {
    const { key } = await admin('rootKeys.createRootKey', { name: 'no webhooks', permissions: ['api.*.read_api'] })
    const page = await signedIn(key)
    await open(page, 'Webhooks')
    await expect
      .poll(() => page.getByRole('alert').allInnerTexts())
      .toContain('This root key may not do that: the root key needs webhook.*.read_endpoint.')
    await page.getByLabel('URL', { exact: true }).fill(NOWHERE)
    await page.getByRole('button', { name: 'Create endpoint' }).click()
    await expect
      .poll(() => page.getByRole('alert').allInnerTexts())
      .toContain('This root key may not do that: the root key needs webhook.*.create_endpoint.')
    await expectAccessible(page, 'a 403 on Webhooks')
    await page.context().close()
  })

  it('shows what an endpoint answered as text in its delivery log, and sends events again from it', async () => {
    // An endpoint that answers 500 with markup: the log shows the start of its body, which its owner controls.
    const hostile = createServer((request, response) => {
      request.resume()
      request.on('end', () => response.writeHead(500, { 'content-type': 'text/html' }).end(XSS))
    })
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve))
    onTestFinished(async () => {
      hostile.closeAllConnections()
      await new Promise((resolve) => hostile.close(resolve))
    })
    const url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}/hooks`
    // identity.deleted only: no other test here deletes an identity, so this endpoint has one event.
    const { endpointId } = await admin('webhooks.createEndpoint', { url, eventTypes: ['identity.deleted'] })
    onTestFinished(async () => void (await admin('webhooks.deleteEndpoint', { endpointId })))
    const { identityId } = await admin('identities.createIdentity', { externalId: 'leaving' })
    await admin('identities.deleteIdentity', { identityId })

    const page = await signedIn()
    const problems = watchProblems(page)
    await page.goto(`${dev.url}/console#/webhooks/${endpointId}`)
    await page.getByRole('heading', { level: 1, name: `Endpoint ${url}` }).waitFor()
    const rows = page.getByRole('region', { name: 'Delivery attempts' }).locator('tbody tr')
    await waitFor(
      async () => {
        await page.getByRole('button', { name: 'Refresh the log' }).click()
        return (await rows.count()) > 0
      },
      'the first attempt in the delivery log',
      10_000,
      250,
    )
    const first = rows.last()
    const [, event, attempt, outcome, answer] = await first.locator('td').allInnerTexts()
    expect(event).toMatch(/^identity\.deleted\nmsg_[\w-]+$/)
    expect([attempt, outcome, answer]).toEqual(['1', 'will retry', 'HTTP 500\nBody'])
    await first.getByText('Body', { exact: true }).click()
    expect(await first.locator('pre').innerText()).toBe(XSS)
    // Enough for an image load (and its onerror) to have happened, had an element been made.
    await page.waitForTimeout(300)
    expect(await page.evaluate<number | undefined>('window.__xss')).toBeUndefined()
    expect(await page.locator('img').count()).toBe(0)
    await expectAccessible(page, 'a delivery log')

    const eventId = event!.split('\n')[1]!
    await first.getByRole('button', { name: `Send again event ${eventId}` }).click()
    await page.getByText(`Queued the event ${eventId} to be sent again.`).waitFor()
    const sinceField = page.getByLabel('Every event since')
    const since = new Date(await sinceField.inputValue()).getTime()
    expect(Date.now() - since).toBeGreaterThan(3_540_000)
    await page.getByRole('button', { name: 'Send events again' }).click()
    await page.getByText('Queued 1 event to be sent again.').waitFor()
    // What was asked of Keygate, as its audit log keeps it: the event by id, then every event from the time shown.
    const audit = await fetch(`${dev.url}/v1/audit.list?action=webhooks.replay&limit=10`, {
      headers: { authorization: `Bearer ${rootKey}` },
    })
    const { entries } = (await audit.json()) as { entries: { context: Record<string, unknown> }[] }
    expect(entries.map((entry) => entry.context).filter((context) => context.endpointId === endpointId)).toEqual([
      { endpointId, since, queued: 1 },
      { endpointId, eventId, queued: 1 },
    ])
    expect(problems).toEqual([])
    await page.context().close()
  })
})
