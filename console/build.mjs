// Bundles the admin console (console/src, Preact + uPlot) into dist/console/ (scripts/bundle-page.mjs). Called by
// scripts/build.mjs (`npm run build`).
import { fileURLToPath, URL } from 'node:url'
import { bundlePage } from '../scripts/bundle-page.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
/** Bundles the console into `out` (dist/console by default), replacing what was there. */
export async function buildConsole(out = `${root}dist/console`) {
  await bundlePage({
    name: 'console',
    entry: `${root}console/src/main.tsx`,
    html: `${root}console/index.html`,
    out,
    // Paths relative to /console: they stay right when a proxy serves Keygate under a path prefix.
    prefix: 'console/',
    files: [`${root}console/icon.svg`],
  })
}
