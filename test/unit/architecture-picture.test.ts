import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const BEGIN = '<!-- house:begin -->'
const END = '<!-- house:end -->'
const REFRESH = 'run `node scripts/architecture-picture.mjs --write` and commit docs/architecture.md'

/** `node scripts/architecture-picture.mjs [flag]`: what it prints. */
function picture(...flags: string[]): string {
  const run = spawnSync(process.execPath, ['scripts/architecture-picture.mjs', ...flags], {
    cwd: ROOT,
    encoding: 'utf8',
  })
  expect(run.status, run.stderr).toBe(0)
  return run.stdout
}

describe("docs/architecture.md's picture of the house", () => {
  it('is the one the code draws today', () => {
    const page = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8')
    const start = page.indexOf(BEGIN)
    const end = page.indexOf(END)
    expect(start, `docs/architecture.md has lost its ${BEGIN} marker`).toBeGreaterThan(-1)
    expect(end, `docs/architecture.md has lost its ${END} marker`).toBeGreaterThan(start)
    expect(page.slice(start, end + END.length), `the picture is stale: ${REFRESH}`).toBe(picture().trimEnd())
  })

  it('finds no import between domains that DOMAIN_IMPORTS (eslint.config.js) leaves out', () => {
    // The linter refuses those too; this reads the imports the script's own way (TypeScript's scanner).
    expect(picture('--domains')).toContain('Imported, but not in DOMAIN_IMPORTS (the linter refuses them): none')
  })
})
