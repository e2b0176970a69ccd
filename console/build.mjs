// What the build (scripts/build.mjs, `npm run build`) bundles of the admin console (console/src, Preact + uPlot) into
// dist/console/, by scripts/bundle-page.mjs.
import { fileURLToPath, URL } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))

export const consolePage = {
  name: 'console',
  entry: `${root}console/src/main.tsx`,
  html: `${root}console/index.html`,
  // Paths relative to /console: they stay right when a proxy serves Keygate under a path prefix.
  prefix: 'console/',
  files: [`${root}console/icon.svg`],
  // The shapes it reads of shared/ and what its API answers, copied into its sources (it may not import shared/).
  generated: [
    { source: 'shared/ui-shapes.ts', copy: 'console/src/generated/ui-shapes.ts' },
    { source: 'shared/console-answers.ts', copy: 'console/src/generated/console-answers.ts' },
  ],
}
