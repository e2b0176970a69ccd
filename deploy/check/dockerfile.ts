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
  let pending = ''
  let startLine = 0
  text.split('\n').forEach((raw, index) => {
    const line = raw.replace(/\r$/, '')
    if (pending === '') startLine = index + 1
    if (/^\s*#/.test(line) || (pending === '' && line.trim() === '')) return
    const continued = /\\\s*$/.test(line)
    pending += continued ? `${line.replace(/\\\s*$/, '')} ` : line
    if (continued) return
    add(stages, pending.trim(), startLine)
    pending = ''
  })
  if (pending.trim()) add(stages, pending.trim(), startLine)
  return stages
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
