import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { checkDockerfile } from '../../deploy/check/dockerfile-rules.js'
import { formatProblem } from '../../deploy/check/problem.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const temps: string[] = []
afterAll(() => temps.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

/** The repository's Dockerfile with `from` replaced by `to`, checked against the repository as the build context. */
function problemsWith(from: string, to: string, dockerignore?: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'keygate-dockerfile-'))
  temps.push(dir)
  cpSync(join(ROOT, 'Dockerfile'), join(dir, 'Dockerfile'))
  const text = readFileSync(join(dir, 'Dockerfile'), 'utf8')
  expect(text, from).toContain(from)
  writeFileSync(join(dir, 'Dockerfile'), text.replace(from, to))
  return checkDockerfile(
    join(dir, 'Dockerfile'),
    ROOT,
    'Dockerfile',
    dockerignore === undefined ? {} : { dockerignore },
  ).map(formatProblem)
}

describe("the build stage is given the scripts package.json's build runs", () => {
  it('passes as the Dockerfile is', () => {
    expect(checkDockerfile(join(ROOT, 'Dockerfile'), ROOT).map(formatProblem)).toEqual([])
  })

  it('names scripts/build.mjs when no COPY gives it, or when .dockerignore keeps it out', () => {
    expect(problemsWith('COPY scripts ./scripts\n', '')).toEqual([
      expect.stringContaining(
        "the build stage's `npm run build` is not given scripts/build.mjs (`npm run build` runs it): no COPY before it puts it at /app/scripts/build.mjs",
      ),
      // The pages' builds import it.
      expect.stringContaining('is not given scripts/bundle-page.mjs'),
    ])
    const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    expect(
      problemsWith('COPY tsconfig.json ./\n', 'COPY tsconfig.json ./\n', ignore.replace('!scripts/\n', '')),
    ).toEqual([
      expect.stringContaining('keeps scripts/build.mjs out of the build context (`npm run build` runs it)'),
      expect.stringContaining('keeps scripts/bundle-page.mjs out of the build context'),
    ])
  })

  it('follows the scripts it runs to the ones they import: console/build.mjs, portal/build.mjs', () => {
    expect(problemsWith('COPY console ./console\n', 'COPY console/src ./console/src\n')).toEqual(
      expect.arrayContaining([expect.stringContaining('is not given console/build.mjs')]),
    )
    expect(problemsWith('COPY portal ./portal\n', '')).toEqual(
      expect.arrayContaining([expect.stringContaining('is not given portal/build.mjs')]),
    )
  })
})
