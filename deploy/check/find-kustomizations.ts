import { readdirSync } from 'node:fs'
import { join } from 'node:path'

const KUSTOMIZATION_FILES = new Set(['kustomization.yaml', 'kustomization.yml', 'Kustomization'])

/** Every directory under `root` (itself included) that holds a kustomization, sorted, found by walking the tree. */
export function findKustomizations(root: string): string[] {
  const found: string[] = []
  const walk = (dir: string): void => {
    const entries = readdirSync(dir, { withFileTypes: true })
    if (entries.some((entry) => entry.isFile() && KUSTOMIZATION_FILES.has(entry.name))) found.push(dir)
    for (const entry of entries) {
      if (entry.isDirectory() && entry.name !== 'node_modules' && !entry.name.startsWith('.'))
        walk(join(dir, entry.name))
    }
  }
  walk(root)
  return found.sort()
}
