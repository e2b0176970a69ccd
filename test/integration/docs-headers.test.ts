import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestControlPlane, type TestServer } from '../support/apps.js'

/**
 * /docs is where an admin pastes a root key, on the same origin as /console: every response under it (the page,
 * each file it loads, the document in both formats) and /openapi.json carries the console's protections. Whether
 * Swagger UI still runs under the policy is test/e2e/docs-browser.test.ts's question.
 */
let server: TestServer

beforeAll(async () => {
  server = await startTestControlPlane()
})
afterAll(async () => {
  await server.close()
})

const get = (url: string) => server.app.inject({ method: 'GET', url })

/** Every directive of a CSP header, by name. */
function directives(header: unknown): Map<string, string[]> {
  return new Map(
    String(header)
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .map(([name, ...values]) => [name!, values]),
  )
}

/** The page, every file it loads, the document its script fetches (and its YAML form), and /openapi.json. */
async function docsUrls(): Promise<string[]> {
  const page = (await get('/docs/')).body
  const loaded = [...page.matchAll(/(?:src|href)="\.\/([^"]+)"/g)].map((match) => `/docs/${match[1]!}`)
  expect(loaded).toContain('/docs/static/swagger-ui-bundle.js')
  expect(loaded).toContain('/docs/static/swagger-ui.css')
  return ['/docs', '/docs/', ...loaded, '/docs/json', '/docs/yaml', '/openapi.json']
}

describe('/docs security headers', () => {
  it('sends a CSP that forbids framing and allows scripts, styles and calls from this origin only', async () => {
    const csp = directives((await get('/docs/')).headers['content-security-policy'])
    expect(csp.get('frame-ancestors')).toEqual(["'none'"])
    expect(csp.get('default-src')).toEqual(["'none'"])
    expect(csp.get('script-src')).toEqual(["'self'"])
    // The hash of the one stylesheet Swagger UI writes inline, and no other.
    expect(csp.get('style-src')).toEqual(["'self'", expect.stringMatching(/^'sha256-[A-Za-z0-9+/]{43}='$/)])
    expect(csp.get('connect-src')).toEqual(["'self'"])
    expect(csp.get('base-uri')).toEqual(["'none'"])
    expect(csp.get('form-action')).toEqual(["'none'"])
    const everything = [...csp.values()].flat()
    for (const loose of ["'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", '*', 'http:', 'https:'])
      expect(everything, loose).not.toContain(loose)
  })

  it('sends the same policy and protections on the page, every file it loads, and the document', async () => {
    const policy = (await get('/docs/')).headers['content-security-policy']
    // Comparing alone would pass if no response carried a policy at all.
    expect(policy).toMatch(/frame-ancestors 'none'/)
    for (const url of await docsUrls()) {
      const answer = await get(url)
      expect(answer.statusCode, url).toBe(200)
      expect(answer.headers['content-security-policy'], url).toBe(policy)
      expect(answer.headers, url).toMatchObject({
        'x-frame-options': 'DENY',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-resource-policy': 'same-origin',
      })
    }
  })
})
