import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { chromium, type Browser, type Page } from 'playwright-core'
import { expect } from 'vitest'
import { waitFor } from './wait-for.js'

/**
 * Debian's headless Chromium (npm test installs chromium-headless-shell: a browser without a desktop's packages), or
 * a full Chromium where only that is installed; CHROMIUM_PATH names another. playwright cannot download browsers here.
 */
export const CHROMIUM =
  process.env.CHROMIUM_PATH ??
  ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((path) => existsSync(path)) ??
  '/usr/bin/chromium-headless-shell'

/**
 * Where a test writes a screenshot of the console: under .tmp/ (git ignores it), or, for `npm run docs:screenshots`,
 * the folder KEYGATE_SCREENSHOTS_DIR names (docs/, whose pictures the console's page shows). A test run never
 * changes a tracked file.
 */
export function screenshotPath(name: string): string {
  const root = new URL('../../', import.meta.url)
  const dir = new URL(`${process.env.KEYGATE_SCREENSHOTS_DIR ?? '.tmp/screenshots'}/`, root)
  mkdirSync(dir, { recursive: true })
  return new URL(name, dir).pathname
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium-headless-shell (npm test does)`)
  return chromium.launch({
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
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: { target: string[] }[]
}

/**
 * Runs axe-core on the page as it is and fails on any serious or critical violation (with `every`, on any violation
 * at all), naming each. axe is evaluated through the DevTools protocol, which the page's CSP does not govern: no
 * policy is loosened for the test.
 */
export async function expectAccessible(page: Page, where: string, options: { every?: boolean } = {}): Promise<void> {
  // Expressions as text: the tests are type-checked without the DOM's types, and these run in the page.
  if (!(await page.evaluate<boolean>("'axe' in window"))) await page.evaluate(AXE)
  const violations = await page.evaluate<AxeViolation[]>(
    "axe.run(document, { resultTypes: ['violations'] }).then((results) => results.violations)",
  )
  const grave = violations
    .filter((violation) => options.every || violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
    )
  expect(grave, where).toEqual([])
}

/** Collects what would show a broken page: script errors, console errors (a CSP refusal logs one), failed loads. */
export function watchProblems(page: Page): string[] {
  const problems: string[] = []
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`))
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`)
  })
  // A request the page itself dropped (a reload or navigation while the icon loads: net::ERR_ABORTED) is not a fault.
  page.on('requestfailed', (request) => {
    if (request.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`failed: ${request.url()}`)
  })
  return problems
}

/**
 * The words of the page's usage chart (an api's, key's or identity's, or the overview's) once its own answer has come:
 * it says "loading" until then.
 */
export async function usageSummary(page: Page): Promise<string> {
  const summary = page.getByTestId('usage-summary')
  return waitFor(
    async () => {
      const text = await summary.innerText()
      return text.endsWith(': loading') ? undefined : text
    },
    'the usage chart to answer',
    10_000,
    20,
  )
}

/**
 * Waits until the analytics engine counts `count` verifications of the api `apiId`, asking the analytics route as the
 * console does: processes hand their rows to the store every 2 s, and the control plane ingests them within a second
 * while there are rows, or up to 16 s after an idle spell. Each ask counts against the route's hourly quota (1,000):
 * one every 500 ms.
 */
export async function waitForIngested(baseUrl: string, rootKey: string, apiId: string, count: number): Promise<void> {
  // apiId is an id Keygate made (api_ and base58): nothing to escape.
  expect(apiId).toMatch(/^api_\w+$/)
  const query = `SELECT sum(count) AS verifications FROM key_verifications_per_hour_v1 WHERE key_space_id = '${apiId}'`
  await waitFor(
    async () => {
      const answer = await fetch(`${baseUrl}/v2/analytics.getVerifications`, {
        method: 'POST',
        headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      })
      if (answer.status !== 200) throw new Error(`HTTP ${answer.status}: ${await answer.text()}`)
      const counted = ((await answer.json()) as { data: { verifications?: number }[] }).data[0]?.verifications
      // Thrown, the count is said if the wait times out.
      if (counted !== count) throw new Error(`it counts ${String(counted)}`)
      return true
    },
    `the engine to count ${count} verifications of ${apiId}`,
    40_000,
    500,
  )
}
