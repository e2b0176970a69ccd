// What the build (scripts/build.mjs, `npm run build`) bundles of the customer portal (portal/src, Preact) into
// dist/portal/, by scripts/bundle-page.mjs.
import { fileURLToPath, URL } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))

export const portalPage = {
  name: 'portal',
  entry: `${root}portal/src/main.tsx`,
  html: `${root}portal/index.html`,
  // The page is /portal/: its files are beside it, and a proxy's path prefix in front of Keygate keeps them right.
  prefix: '',
  files: [`${root}portal/icon.svg`],
  // The shapes it reads of shared/ and what its API answers, copied into its sources (it may not import shared/).
  generated: [
    { source: 'shared/ui-shapes.ts', copy: 'portal/src/generated/ui-shapes.ts' },
    { source: 'shared/portal-answers.ts', copy: 'portal/src/generated/portal-answers.ts' },
  ],
}
