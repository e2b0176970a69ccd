import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { specs } from '../../shared/config/config.js'

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')

describe('README', () => {
  it('starts with the two commands', () => {
    const firstBlock = readme.split('```')[1] ?? ''
    expect(firstBlock).toContain('npm install && npm start')
    expect(firstBlock).toContain('npm test')
  })

  it('documents every flag and environment variable the code reads', () => {
    for (const spec of Object.values(specs).flat()) {
      expect(readme, `--${spec.flag}`).toContain(`\`--${spec.flag}\``)
      expect(readme, spec.env).toContain(`\`${spec.env}\``)
    }
  })
})
