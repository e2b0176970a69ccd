import { execFile } from 'node:child_process'
import { relative } from 'node:path'
import { promisify } from 'node:util'
import { parseAllDocuments } from 'yaml'
import { isManifest, type Rendering } from './manifest.js'
import type { Problem } from './problem.js'

const run = promisify(execFile)

/**
 * `kubectl kustomize dir`, parsed: every document must be a Kubernetes object (apiVersion, kind,
 * metadata.name). `source` is the directory relative to `base`, which is how problems name it.
 */
export async function renderKustomization(dir: string, base: string, kubectl = 'kubectl'): Promise<{ rendering: Rendering; problems: Problem[] }> {
  const source = relative(base, dir) || '.'
  const rendering: Rendering = { source, objects: [] }
  let output: string
  try {
    output = (await run(kubectl, ['kustomize', dir], { maxBuffer: 64 * 1024 * 1024 })).stdout
  } catch (err) {
    const { code, stderr } = err as { code?: unknown; stderr?: string }
    const message = code === 'ENOENT'
      ? `${kubectl} not found: install kubectl (Debian: apt-get install kubectl) to render the kustomizations`
      : `kubectl kustomize failed: ${(stderr ?? String(err)).trim().split('\n').slice(0, 5).join(' | ')}`
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
    else problems.push({ where: `${source} document ${index + 1}`, message: 'not a Kubernetes object (apiVersion, kind and metadata.name)' })
  })
  return { rendering, problems }
}
