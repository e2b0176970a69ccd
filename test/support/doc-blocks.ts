import { readFileSync } from 'node:fs'

const ROOT = new URL('../../', import.meta.url)

/**
 * The fenced ````language` block of the `## heading` section of one of the repository's Markdown pages (`file`,
 * relative to its root: `docs/gateways.md`, `deploy/README.md`), as a user pastes it, with the values the user fills
 * in replaced: every `[from, to]` must occur in the block, so a page that changes what it documents makes the test
 * fail rather than run something else. The end-to-end tests run this text.
 */
export function docBlock(file: string, heading: string, language: string, replacements: [string, string][]): string {
  const page = readFileSync(new URL(file, ROOT), 'utf8')
  const start = page.indexOf(`\n## ${heading}\n`)
  if (start === -1) throw new Error(`${file} has no section "## ${heading}"`)
  const end = page.indexOf('\n## ', start + 1)
  const section = page.slice(start, end === -1 ? undefined : end)
  const blocks = [...section.matchAll(new RegExp(`\\n\`\`\`${language}\\n([\\s\\S]*?)\\n\`\`\`\\n`, 'g'))]
  if (blocks.length !== 1) throw new Error(`"## ${heading}" has ${blocks.length} \`\`\`${language} blocks, not one`)
  let block = blocks[0]![1]!
  for (const [from, to] of replacements) {
    if (!block.includes(from)) throw new Error(`${file}'s ${language} block no longer holds ${JSON.stringify(from)}`)
    block = block.split(from).join(to)
  }
  return block
}
