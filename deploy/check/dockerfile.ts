import { posix } from 'node:path'

/** One instruction, continuation lines joined; `exec` is the JSON (exec) form when it is one. */
export interface Instruction {
  keyword: string
  args: string
  exec: string[] | undefined
  line: number
  /** The WORKDIR in effect when the instruction runs. */
  workdir: string
}

export interface Stage {
  name: string | undefined
  instructions: Instruction[]
}

/**
 * Splits a Dockerfile into build stages and their instructions: enough to follow paths through WORKDIR,
 * COPY and RUN. Heredocs and a changed escape character are not understood (the lint reports the rest).
 */
export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = []
  for (const { text: instruction, line } of logicalLines(text)) add(stages, instruction, line)
  return stages
}

/** The Dockerfile's instructions, continuation lines joined, comments and blank lines dropped. */
function logicalLines(text: string): Array<{ text: string; line: number }> {
  const lines: Array<{ text: string; line: number }> = []
  let pending = ''
  let startLine = 0
  text.split('\n').forEach((raw, index) => {
    const line = raw.replace(/\r$/, '')
    if (pending === '') startLine = index + 1
    if (/^\s*#/.test(line) || (pending === '' && line.trim() === '')) return
    const continued = /\\\s*$/.test(line)
    pending += continued ? `${line.replace(/\\\s*$/, '')} ` : line
    if (continued) return
    lines.push({ text: pending.trim(), line: startLine })
    pending = ''
  })
  if (pending.trim()) lines.push({ text: pending.trim(), line: startLine })
  return lines
}

/** The image a stage starts from, after the global ARGs' defaults are put in. */
export interface BaseImage {
  /** The stage's name (`AS name`), if it has one. */
  stage: string | undefined
  /** The FROM line. */
  line: number
  /** The image as written (`${NODE_IMAGE}`). */
  written: string
  /** The image with the global ARGs' defaults in place; undefined when one of them has no default. */
  image: string | undefined
  /** The global ARGs it was made of, by name, with their lines. */
  args: Array<{ name: string; line: number }>
}

/**
 * Each stage's base image that is not an earlier stage of the same Dockerfile (`FROM build AS test`). Only the
 * ARGs before the first FROM can be used in FROM; their defaults are what `docker build` uses without
 * `--build-arg`, so that is the image the Dockerfile ships.
 */
export function baseImages(text: string): BaseImage[] {
  const globals = new Map<string, { value: string | undefined; line: number }>()
  const stageNames = new Set<string>()
  const images: BaseImage[] = []
  let inStage = false
  for (const { text: instruction, line } of logicalLines(text)) {
    const keyword = (instruction.split(/\s+/)[0] ?? '').toUpperCase()
    const args = instruction.slice(keyword.length).trim()
    if (keyword === 'ARG' && !inStage) {
      for (const word of args.split(/\s+/)) {
        const [name = '', ...value] = word.split('=')
        globals.set(name, { value: value.length ? value.join('=').replace(/^(["'])(.*)\1$/, '$2') : undefined, line })
      }
    }
    if (keyword !== 'FROM') continue
    inStage = true
    const words = args.split(/\s+/).filter((word) => !word.startsWith('--'))
    const written = words[0] ?? ''
    const stage = /^as$/i.test(words[1] ?? '') ? words[2] : undefined
    if (!stageNames.has(written.toLowerCase())) {
      const used: Array<{ name: string; line: number }> = []
      let unresolved = false
      const image = written.replace(
        /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
        (_, braced?: string, fallback?: string, bare?: string) => {
          const name = (braced ?? bare)!
          const global = globals.get(name)
          if (global) used.push({ name, line: global.line })
          const value = global?.value || fallback
          if (value === undefined) unresolved = true
          return value ?? ''
        },
      )
      images.push({ stage, line, written, image: unresolved ? undefined : image, args: used })
    }
    if (stage) stageNames.add(stage.toLowerCase())
  }
  return images
}

function add(stages: Stage[], text: string, line: number): void {
  const keyword = text.split(/\s+/)[0] ?? ''
  const args = text.slice(keyword.length).trim()
  const upper = keyword.toUpperCase()
  if (upper === 'FROM') {
    const as = /\s+AS\s+(\S+)\s*$/i.exec(args)
    stages.push({ name: as?.[1], instructions: [] })
  }
  const stage = stages.at(-1)
  if (!stage) return // instructions before the first FROM (ARG) belong to no stage
  const previous = stage.instructions.at(-1)
  let workdir = previous?.workdir ?? '/'
  if (previous?.keyword === 'WORKDIR') workdir = posix.resolve(workdir, previous.args)
  stage.instructions.push({ keyword: upper, args, exec: execForm(args), line, workdir })
}

function execForm(args: string): string[] | undefined {
  if (!args.startsWith('[')) return undefined
  try {
    const parsed: unknown = JSON.parse(args)
    return Array.isArray(parsed) && parsed.every((item) => typeof item === 'string') ? parsed : undefined
  } catch {
    return undefined
  }
}

/** The stage a `COPY --from=` names: by name, or by index. */
export function stageNamed(stages: Stage[], reference: string): Stage | undefined {
  return (
    stages.find((stage) => stage.name?.toLowerCase() === reference.toLowerCase()) ??
    (/^\d+$/.test(reference) ? stages[Number(reference)] : undefined)
  )
}

/** The WORKDIR at the end of a stage. */
export function finalWorkdir(stage: Stage): string {
  const last = stage.instructions.at(-1)
  if (!last) return '/'
  return last.keyword === 'WORKDIR' ? posix.resolve(last.workdir, last.args) : last.workdir
}
