// Bundles the customer portal (portal/src, Preact) into dist/portal/ (scripts/bundle-page.mjs). Called by
// scripts/build.mjs (`npm run build`).
import { fileURLToPath, URL } from 'node:url'
import { bundlePage } from '../scripts/bundle-page.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
/** Bundles the portal into `out` (dist/portal by default), replacing what was there. */
export async function buildPortal(out = `${root}dist/portal`) {
  await bundlePage({
    name: 'portal',
    entry: `${root}portal/src/main.tsx`,
    html: `${root}portal/index.html`,
    out,
    // The page is /portal/: its files are beside it, and a proxy's path prefix in front of Keygate keeps them right.
    prefix: '',
    files: [`${root}portal/icon.svg`],
  })
}
