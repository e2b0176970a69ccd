// Bundles one browser page (Preact, TypeScript) into a folder: one script and one stylesheet, named by content hash
// so that the control plane can let browsers keep them, and the page's HTML naming them. The admin console
// (console/build.mjs) and the customer portal (portal/build.mjs) are built by it; esbuild strips types without
// checking them: `npm run typecheck` checks them.
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename } from 'node:path'
import { build } from 'esbuild'

/**
 * Bundles `entry` (a .tsx file) into `out`, replacing what was there, and writes `html` there as index.html with
 * `{{script}}` and `{{style}}` replaced by the bundles' names after `prefix` (the path the page links them by).
 * `files` are copied beside them as they are (an icon).
 */
export async function bundlePage({ name, entry, html, out, prefix, files = [] }) {
  rmSync(out, { recursive: true, force: true })
  const result = await build({
    entryPoints: { [name]: entry },
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
    const file = outputs.find((output) => output.endsWith(extension))
    if (!file) throw new Error(`esbuild wrote no ${extension} file for ${name}`)
    return file
  }
  const page = readFileSync(html, 'utf8')
    .replace('{{script}}', `${prefix}${named('.js')}`)
    .replace('{{style}}', `${prefix}${named('.css')}`)
  writeFileSync(`${out}/index.html`, page)
  for (const file of files) writeFileSync(`${out}/${basename(file)}`, readFileSync(file))
}
