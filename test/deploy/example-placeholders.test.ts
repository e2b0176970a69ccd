import { execFile, spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { checkKustomization } from '../../deploy/check/check-kustomization.js'
import { checkDeployTree, KEYGATE_TEMPLATES } from '../../deploy/check/check-tree.js'
import { pristineTemplates } from '../../deploy/check/pristine-templates.js'
import { formatProblem } from '../../deploy/check/problem.js'
import { startTestControlPlane, TEST_ROOT_KEY } from '../support/apps.js'
import { docBlock } from '../support/doc-blocks.js'

/**
 * deploy/README step 7 has users fill the examples' `api_REPLACE_ME` in place, with the api id step 6 made. A
 * forgotten or half-done fill must fail `npm run check:deploy`, and deploy/README.md's lines must fill it as pasted.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const PROXY = 'deploy/examples/sidecar/proxy'
const PROXY_DEPLOYMENT = join(PROXY, 'deployment.yaml')
const PLACEHOLDER_NOTE = `${PROXY} Deployment/example-api-proxied container keygate-verifier: env AUTHORIZE_API_ID is still the placeholder "api_REPLACE_ME": set it to your api's id (the apiId apis.createApi answered) before applying`

const temps: string[] = []
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true })
})

/** A scratch tree holding this checkout's deploy/examples (and the Dockerfile), as a user's clone has them. */
function scratchTree(): string {
  const root = mkdtempSync(join(tmpdir(), 'keygate-examples-'))
  temps.push(root)
  cpSync(join(ROOT, 'deploy/examples'), join(root, 'deploy/examples'), { recursive: true })
  cpSync(join(ROOT, 'Dockerfile'), join(root, 'Dockerfile'))
  return root
}

function git(root: string, ...args: string[]): void {
  const run = spawnSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], {
    cwd: root,
    encoding: 'utf8',
  })
  expect(run.status, run.stderr).toBe(0)
}

function replaceIn(file: string, from: string, to: string): void {
  const before = readFileSync(file, 'utf8')
  expect(before).toContain(from)
  writeFileSync(file, before.replace(from, to))
}

/** What `npm run check:deploy` reports on the tree as this checkout: templates only while as committed. */
async function checkAsOwnCheckout(root: string): Promise<{ problems: string[]; notes: string[] }> {
  const { problems, notes } = await checkDeployTree({ root, templates: pristineTemplates(root, KEYGATE_TEMPLATES) })
  return { problems: problems.map(formatProblem), notes: notes.map(formatProblem) }
}

describe("the examples' placeholder in this checkout", () => {
  it('is a note while git has the examples as committed, a problem once they are edited and still hold it', async () => {
    const root = scratchTree()
    git(root, 'init', '-q')
    git(root, 'add', '.')
    git(root, 'commit', '-q', '-m', 'examples')
    expect(pristineTemplates(root, KEYGATE_TEMPLATES)).toEqual(['deploy/examples'])
    const pristine = await checkAsOwnCheckout(root)
    expect(pristine.problems.filter((problem) => problem.includes('placeholder'))).toEqual([])
    expect(pristine.notes).toContain(PLACEHOLDER_NOTE)

    // The user's API in place of http-echo, the api id forgotten: theirs now, so the placeholder fails the check.
    replaceIn(join(root, PROXY_DEPLOYMENT), 'hashicorp/http-echo', 'registry.example.com/my-api')
    expect(pristineTemplates(root, KEYGATE_TEMPLATES)).toEqual([])
    const edited = await checkAsOwnCheckout(root)
    expect(edited.problems).toContain(PLACEHOLDER_NOTE)
    expect(edited.notes).toEqual([])

    // A new file counts as an edit too.
    git(root, 'checkout', '-q', '--', '.')
    writeFileSync(join(root, PROXY, 'extra.yaml'), 'kind: ConfigMap\n')
    expect(pristineTemplates(root, KEYGATE_TEMPLATES)).toEqual([])
  })

  it('is a problem where git cannot say the examples are as committed (not a checkout)', async () => {
    const root = scratchTree()
    expect(pristineTemplates(root, KEYGATE_TEMPLATES)).toEqual([])
    expect((await checkAsOwnCheckout(root)).problems).toContain(PLACEHOLDER_NOTE)
  })

  it("an id shortened with '…' as the docs print it is a problem, even in a template", async () => {
    const root = scratchTree()
    replaceIn(join(root, PROXY_DEPLOYMENT), 'api_REPLACE_ME', 'api_1Ch…')
    const expected = `${PROXY} Deployment/example-api-proxied container keygate-verifier: env AUTHORIZE_API_ID "api_1Ch…" holds '…', a shortened value copied from the docs: put the whole value`
    expect((await checkKustomization(join(root, PROXY), { base: root })).map(formatProblem)).toEqual([expected])
    const { problems } = await checkDeployTree({ root, templates: KEYGATE_TEMPLATES })
    expect(problems.map(formatProblem)).toContain(expected)
  })
})

describe('deploy/README steps 6 and 7, pasted as written', () => {
  /** Step 7's lines that edit the examples (the rest needs a cluster). */
  const step7Edits = () =>
    docBlock('deploy/README.md', '7. Add the verifier to your API', 'sh', [])
      .split('\n')
      .filter((line) => line.startsWith('sed '))

  it('step 7 puts the api id step 6 made into the manifest, which then passes the check', async () => {
    const server = await startTestControlPlane()
    try {
      const url = await server.app.listen({ port: 0, host: '127.0.0.1' })
      // Step 6 against a real control plane: the port-forward stands in for the one the test listens on.
      const step6 = docBlock('deploy/README.md', '6. Check it works', 'sh', [
        ['kubectl -n keygate port-forward svc/keygate-control-plane 7070:7070 &\n', ''],
        ['export KG=http://127.0.0.1:7070', `export KG=${url}`],
      ])
      const edits = step7Edits()
      expect(edits).toHaveLength(1)
      const root = scratchTree()
      // Not spawnSync: the control plane answering it runs in this process.
      const run = await promisify(execFile)('bash', ['-e', '-o', 'pipefail', '-c', [step6, ...edits].join('\n')], {
        cwd: root,
        env: { PATH: process.env.PATH, ROOT_KEY: TEST_ROOT_KEY },
        encoding: 'utf8',
        timeout: 30_000,
      }).catch((err: { code: number; stdout: string; stderr: string }) => err)
      expect('code' in run ? run.code : 0, run.stdout + run.stderr).toBe(0)
      const apiId = /^(api_\w+)$/m.exec(run.stdout)?.[1]
      expect(apiId, run.stdout).toBeDefined()
      expect(readFileSync(join(root, PROXY_DEPLOYMENT), 'utf8')).toContain(`value: ${apiId}\n`)
      expect((await checkKustomization(join(root, PROXY), { base: root })).map(formatProblem)).toEqual([])
    } finally {
      await server.close()
    }
  })

  it('without step 6 (API_ID unset), step 7 stops, saying so, and leaves the manifest as it was', () => {
    const root = scratchTree()
    const before = readFileSync(join(root, PROXY_DEPLOYMENT), 'utf8')
    const run = spawnSync('bash', ['-e', '-c', step7Edits().join('\n')], {
      cwd: root,
      env: { PATH: process.env.PATH },
      encoding: 'utf8',
    })
    expect(run.status).not.toBe(0)
    expect(run.stderr).toContain('API_ID: run step 6 first: it sets API_ID')
    expect(readFileSync(join(root, PROXY_DEPLOYMENT), 'utf8')).toBe(before)
  })
})
