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
 * A key page's chart switched to the last 30 days and back, read once the last 24 hours' own answer has come: its
 * summary says "loading" until then (~30 ms here). Read at once, a fast host read "loading" nearly every time.
 */
export async function reloadedDaySummary(page: Page): Promise<string> {
  const summary = page.getByTestId('verifications-summary')
  await page.getByRole('button', { name: 'Last 30 days' }).click()
  await page.getByRole('button', { name: 'Last 24 hours' }).click()
  return waitFor(
    async () => {
      const text = await summary.innerText()
      return text.endsWith(': loading') ? undefined : text
    },
    'the chart to answer for the last 24 hours',
    5_000,
    20,
  )
}
