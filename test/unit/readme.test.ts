import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { specs } from '../../shared/config/config.js'
import { ERRORS } from '../../shared/errors.js'
import { GATEWAY_CODES } from '../../verifier/verdict-status.js'

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')

describe('README', () => {
  it('starts with the two commands', () => {
    const firstBlock = readme.split('```')[1] ?? ''
    expect(firstBlock).toContain('npm install && npm start')
    expect(firstBlock).toContain('npm test')
  })

  it("runs keygate as npx keygate in every sh block: after the README's set-up, keygate alone is not on the PATH", () => {
    const blocks = [...readme.matchAll(/\n```sh\n([\s\S]*?)\n```\n/g)].map((match) => match[1]!)
    const bare = blocks.flatMap((block) => block.split('\n')).filter((line) => /^\s*keygate\s/.test(line))
    expect(bare).toEqual([])
  })

  it('documents every flag and environment variable the code reads', () => {
    for (const spec of Object.values(specs).flat()) {
      expect(readme, `--${spec.flag}`).toContain(`\`--${spec.flag}\``)
      expect(readme, spec.env).toContain(`\`${spec.env}\``)
    }
  })

  it("lists every code a client can see: the error table, and the gateways' X-Keygate-Code table, each with its status", () => {
    const section = (heading: string) => {
      const start = readme.indexOf(`\n${heading}\n`)
      expect(start, heading).toBeGreaterThan(-1)
      const level = heading.split(' ')[0]!
      const next = readme.slice(start + heading.length + 2).search(new RegExp(`\n#{2,${level.length}} `))
      return readme.slice(start, next === -1 ? undefined : start + heading.length + 2 + next)
    }
    const errors = section('### Errors')
    for (const [code, status] of Object.entries(ERRORS)) expect(errors, code).toContain(`| ${status} | \`${code}\` |`)
    const gateways = section('## Gateways: forward-auth')
    // The gateway codes, and the 503 the verifier fails closed with (an error of the table above, in the header too).
    const codes: [string, number][] = [...Object.entries(GATEWAY_CODES), ['UNAVAILABLE', ERRORS.UNAVAILABLE]]
    for (const [code, status] of codes) {
      expect(gateways, code).toContain(`| \`${code}\` | ${status} |`)
    }
  })
})
