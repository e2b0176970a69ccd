import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { specs } from '../../shared/config/config.js'
import { ERRORS } from '../../shared/errors/errors.js'
import { failsChecksum, isChecksummed } from '../../shared/keys/key-checksum.js'
import { GATEWAY_CODES } from '../../shared/errors/gateway-codes.js'
import { PORTAL_SESSION_ROUTES } from '../../control-plane/portal/session/session-routes.v2.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8')
const DOCS = readdirSync(join(ROOT, 'docs'))
  .filter((file) => file.endsWith('.md'))
  .map((file) => `docs/${file}`)
/** Every page a user reads: the README, the docs, and the guides beside the code. */
const PAGES = ['README.md', ...DOCS, 'deploy/README.md', 'deploy/observability/README.md', 'bench/README.md']

/** A `## heading` section of a page, up to the next heading of its level or higher. */
function section(page: string, heading: string): string {
  const text = read(page)
  const start = text.indexOf(`\n${heading}\n`)
  expect(start, `${page}: ${heading}`).toBeGreaterThan(-1)
  const level = heading.split(' ')[0]!.length
  const next = text.slice(start + heading.length + 2).search(new RegExp(`\n#{1,${level}} `))
  return text.slice(start, next === -1 ? undefined : start + heading.length + 2 + next)
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, … */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '')
  for (const [, title] of withoutCode.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = title!
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  for (const [, id] of withoutCode.matchAll(/<a id="([^"]+)"/g)) anchors.add(id!)
  return anchors
}

describe('the README', () => {
  it('starts with the two commands, and fits in 30 KB', () => {
    const firstBlock = read('README.md').split('```')[1] ?? ''
    expect(firstBlock).toContain('npm install && npm start')
    expect(firstBlock).toContain('npm test')
    expect(Buffer.byteLength(read('README.md'))).toBeLessThanOrEqual(30 * 1024)
  })

  it('links every page under docs/', () => {
    const readme = read('README.md')
    for (const page of DOCS) expect(readme, page).toContain(`](${page})`)
  })
})

describe('the docs', () => {
  it('bench/RESULTS.md fits in 30 KB', () => {
    expect(Buffer.byteLength(read('bench/RESULTS.md'))).toBeLessThanOrEqual(30 * 1024)
  })

  it('document every flag and environment variable the code reads, in docs/configuration.md', () => {
    const configuration = read('docs/configuration.md')
    for (const spec of Object.values(specs).flat()) {
      expect(configuration, `--${spec.flag}`).toContain(`\`--${spec.flag}\``)
      expect(configuration, spec.env).toContain(`\`${spec.env}\``)
    }
  })

  it("give each number option's default in docs/configuration.md as the option table has it", () => {
    // The revocation bound and the poll (MAX_STALENESS_MS, POLL_INTERVAL_MS) among them: a default changed on one side
    // only would promise operators another bound than the one they run with.
    const rows = read('docs/configuration.md').split('\n')
    for (const spec of Object.values(specs).flat()) {
      if ((spec.kind !== 'int' && spec.kind !== 'port') || !('default' in spec)) continue
      const row = rows.find((line) => line.startsWith(`| \`--${spec.flag}\` |`))
      expect(row?.split('|')[3]?.trim(), `--${spec.flag}`).toMatch(new RegExp(`\\b${spec.default}\\b`))
    }
  })

  it("list every code a client can see, with its status: the errors (docs/api.md), the gateways' (docs/gateways.md)", () => {
    const errors = section('docs/api.md', '## Errors')
    for (const [code, status] of Object.entries(ERRORS)) expect(errors, code).toContain(`| ${status} | \`${code}\` |`)
    const gateways = section('docs/gateways.md', '## Forward-auth')
    // The gateway codes, and the 503 the verifier fails closed with (an error of the table above, in the header too).
    const codes: [string, number][] = [...Object.entries(GATEWAY_CODES), ['UNAVAILABLE', ERRORS.UNAVAILABLE]]
    for (const [code, status] of codes) expect(gateways, code).toContain(`| \`${code}\` | ${status} |`)
  })

  it("name the portal's browser calls in docs/portal.md with their method and path, every one of them", () => {
    const routes = section('docs/portal.md', '## The routes')
    const browser = routes.slice(routes.indexOf("The customer's browser"))
    expect(browser.replace(/\n/g, ' ')).toMatch(/^The customer's browser, each call a `POST \/v2\/portal\.<call>`/)
    const named = [...browser.matchAll(/^\| `(portal\.\w+)/gm)].map((m) => m[1])
    expect(named).toEqual(PORTAL_SESSION_ROUTES.map((route) => route.operation))
  })

  it('show in the README a key as keys.createKey makes it: checksum and all, its start its own', () => {
    // The whole page: the walk-through's block has `# comments`, which section() would take for headings.
    const walk = read('README.md')
    // The answers shown (`# → {"key":"sk_…"}`), not the requests' `$KEY`.
    const keys = [...walk.matchAll(/"key":"(\w+_[^"$]+)"/g)].map((m) => m[1]!)
    expect(keys.length).toBeGreaterThan(0)
    for (const key of keys) {
      expect(isChecksummed(key), key).toBe(true)
      expect(failsChecksum(key), key).toBe(false)
    }
    for (const [, start] of walk.matchAll(/"start":"([^"]+)"/g))
      expect(keys.some((key) => key.startsWith(start!))).toBe(true)
  })

  it('name every metric the servers export in docs/operations.md', () => {
    const sources = ['shared', 'verifier', 'control-plane', 'cli'].flatMap((dir) =>
      readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.ts'))
        .map((file) => read(join(dir, file))),
    )
    const metrics = new Set(
      sources.flatMap((text) => [...text.matchAll(/'(keygate_[a-z_]+[a-z])'/g)].map((m) => m[1]!)),
    )
    expect(metrics.size).toBeGreaterThan(20)
    const operations = read('docs/operations.md')
    expect([...metrics].filter((name) => !operations.includes(`\`${name}`))).toEqual([])
  })

  it('link only to files and headings that exist', () => {
    const broken: string[] = []
    for (const page of PAGES) {
      const text = read(page).replace(/```[\s\S]*?```/g, '')
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue
        const [path, anchor] = target!.split('#') as [string, string | undefined]
        const file = path === '' ? page : relative(ROOT, join(ROOT, dirname(page), path))
        if (!existsSync(join(ROOT, file))) broken.push(`${page}: ${target} (no ${file})`)
        else if (anchor && file.endsWith('.md') && !anchorsOf(read(file)).has(anchor))
          broken.push(`${page}: ${target} (no heading #${anchor} in ${file})`)
      }
    }
    expect(broken).toEqual([])
  })

  it('say what is true now: no dated lines outside the bench-written results', () => {
    // 2026-11-28, or November 2026: a line that says when is history (a Node line's end of life is in the README's
    // support sentence as a fact, not a date).
    const DATE =
      /\b20\d\d-[01]\d-[0-3]\d\b|\b(January|February|March|April|May|June|July|August|September|October|November|December) 20\d\d\b/
    const generated = /<!-- bench:[\w-]+:start -->[\s\S]*?<!-- bench:[\w-]+:end -->/g
    for (const page of PAGES) {
      const dated = read(page)
        .replace(generated, '')
        .split('\n')
        .filter((line) => DATE.test(line))
      expect(dated, page).toEqual([])
    }
  })

  it('run keygate as npx keygate or from dist/ in every sh block: after npm install, keygate is not on the PATH', () => {
    for (const page of PAGES.filter((file) => !file.startsWith('deploy/'))) {
      const blocks = [...read(page).matchAll(/\n```sh\n([\s\S]*?)\n```\n/g)].map((match) => match[1]!)
      const bare = blocks.flatMap((block) => block.split('\n')).filter((line) => /^\s*keygate\s/.test(line))
      expect(bare, page).toEqual([])
    }
  })
})
