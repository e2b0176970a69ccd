import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseDocument } from 'yaml'

const KUSTOMIZATION_FILES = new Set(['kustomization.yaml', 'kustomization.yml', 'Kustomization'])

/**
 * Every directory under `root` (itself included) that holds a kustomization, sorted, found by walking the tree. A
 * Component (`kind: Component`) is left out: kustomize builds one only inside a kustomization that lists it under
 * `components`, and is checked there.
 */
export function findKustomizations(root: string): string[] {
  const found: string[] = []
  const walk = (dir: string): void => {
    const entries = readdirSync(dir, { withFileTypes: true })
    const file = entries.find((entry) => entry.isFile() && KUSTOMIZATION_FILES.has(entry.name))
    if (file && !isComponent(join(dir, file.name))) found.push(dir)
    for (const entry of entries) {
      if (entry.isDirectory() && entry.name !== 'node_modules' && !entry.name.startsWith('.'))
        walk(join(dir, entry.name))
    }
  }
  walk(root)
  return found.sort()
}

/** A file that does not parse is no Component: rendering it reports what is wrong. */
function isComponent(path: string): boolean {
  const document = parseDocument(readFileSync(path, 'utf8'))
  return document.errors.length === 0 && document.get('kind') === 'Component'
}
