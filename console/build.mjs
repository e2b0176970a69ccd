// Bundles the admin console (console/src, Preact + uPlot) into dist/console/: one script and one stylesheet, named
// by content hash so that the control plane can let browsers keep them, and the page that loads them. Called by
// scripts/build.mjs (`npm run build`); esbuild strips types without checking them: `npm run typecheck` checks them.
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename } from 'node:path'
import { fileURLToPath, URL } from 'node:url'
import { build } from 'esbuild'

const root = fileURLToPath(new URL('..', import.meta.url))
/** Bundles the console into `out` (dist/console by default), replacing what was there. */
export async function buildConsole(out = `${root}dist/console`) {
  rmSync(out, { recursive: true, force: true })
  const result = await build({
    entryPoints: { console: `${root}console/src/main.tsx` },
    outdir: out,
    entryNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    // Browsers of the last few years: no down-levelling of what they all run.
    target: ['chrome111', 'firefox115', 'safari16.4'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  })

  const outputs = Object.keys(result.metafile.outputs).map((file) => basename(file))
  const named = (extension) => {
    const file = outputs.find((name) => name.endsWith(extension))
    if (!file) throw new Error(`esbuild wrote no ${extension} file`)
    return file
  }
  // Paths relative to /console: they stay right when a proxy serves Keygate under a path prefix.
  const page = readFileSync(`${root}console/index.html`, 'utf8')
    .replace('{{script}}', `console/${named('.js')}`)
    .replace('{{style}}', `console/${named('.css')}`)
  writeFileSync(`${out}/index.html`, page)
  writeFileSync(`${out}/icon.svg`, readFileSync(`${root}console/icon.svg`))
}
