import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))

/**
 * What the customer portal's bundle is made of. The lint rule lets the portal import only the console's ui/ and
 * format.ts, but it looks at one import at a time: a ui/ file that imports the console's API client (which holds a
 * root key) would bring it in unseen. The bundle's inputs say what the page really takes.
 */
describe('the portal bundle', () => {
  it('takes of the console only its ui/ and format.ts, whatever they import: never its API client', async () => {
    const { metafile } = await build({
      entryPoints: ['portal/src/main.tsx'],
      bundle: true,
      write: false,
      outdir: 'unused',
      format: 'esm',
      jsx: 'automatic',
      jsxImportSource: 'preact',
      metafile: true,
      logLevel: 'silent',
      absWorkingDir: root,
      // The pages' copies of shared/ui-shapes.ts are written by the build, which this test need not have run.
      plugins: [
        { name: 'generated', setup: (b) => b.onResolve({ filter: /\/generated\// }, () => ({ external: true })) },
      ],
    })
    const fromConsole = Object.keys(metafile.inputs).filter((input) => input.startsWith('console/'))
    expect(fromConsole.length).toBeGreaterThan(0)
    expect(fromConsole.filter((input) => !/^console\/src\/(ui\/[^/]+|format\.ts)$/.test(input))).toEqual([])
  })
})
