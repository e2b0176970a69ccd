import { existsSync, readFileSync } from 'node:fs'

/**
 * The directory of this package's package.json: the first one above this module, which is the checkout whether the
 * module runs from dist/ or, under tests, from the sources (and /app in the image, where package.json travels with
 * dist/).
 */
export function packageRoot(): URL {
  for (let dir = new URL('./', import.meta.url); dir.pathname !== '/'; dir = new URL('../', dir)) {
    if (existsSync(new URL('package.json', dir))) return dir
  }
  throw new Error('package.json not found above the keygate modules')
}

/** The package's version, as `keygate --version` and the OpenAPI document give it. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('package.json', packageRoot()), 'utf8')) as { version: string }).version
}
