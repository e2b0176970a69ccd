import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'

/**
 * The admin console as `npm run build` ships it (dist/console/): small, and whole. The budget is 200 KB of
 * JavaScript gzipped; the page loads nothing from another origin (no CDN: it works offline).
 */
const BUILT = new URL('../../dist/console/', import.meta.url)
const BUDGET_BYTES = 200 * 1024

function built(): string[] {
  if (!existsSync(BUILT)) throw new Error('dist/console is missing: run npm run build (npm test does it)')
  return readdirSync(BUILT)
}

describe('the console bundle', () => {
  it('ships at most 200 KB of JavaScript, gzipped', () => {
    const scripts = built().filter((name) => name.endsWith('.js'))
    expect(scripts.length).toBeGreaterThan(0)
    const gzipped = scripts.map((name) => gzipSync(readFileSync(new URL(name, BUILT))).length)
    const total = gzipped.reduce((sum, size) => sum + size, 0)
    console.info(`console JavaScript: ${scripts.join(', ')}: ${(total / 1024).toFixed(1)} KB gzipped`)
    expect(total).toBeLessThanOrEqual(BUDGET_BYTES)
  })

  it('is one page that loads its script, stylesheet and icon from beside it, nothing inline, nothing remote', () => {
    const page = readFileSync(new URL('index.html', BUILT), 'utf8')
    const loaded = [...page.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((match) => match[1]!)
    const files = built()
    expect(loaded.sort()).toEqual(
      [
        `console/${files.find((name) => name.endsWith('.css'))}`,
        'console/icon.svg',
        `console/${files.find((name) => name.endsWith('.js'))}`,
      ].sort(),
    )
    // Relative to /console, so a path prefix in front of Keygate keeps working; nothing from another origin.
    for (const url of loaded) expect(url).toMatch(/^console\/[\w.-]+$/)
    // Nothing a strict Content-Security-Policy would have to allow with 'unsafe-inline'.
    expect(page).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i)
    const scripts = [...page.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
    expect(scripts).toHaveLength(1)
    expect(scripts[0]![1]).toMatch(/ type="module" src="console\/console-\w+\.js"/)
    expect(scripts[0]![2]).toBe('')
  })
})
