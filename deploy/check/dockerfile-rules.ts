import { existsSync, readFileSync } from 'node:fs'
import { join, posix } from 'node:path'
import { validate } from 'dockerfile-utils'
import { buildInputProblems } from './build-inputs.js'
import { parseDockerignore } from './dockerignore.js'
import {
  baseImages,
  finalWorkdir,
  parseDockerfile,
  stageNamed,
  type BaseImage,
  type Instruction,
  type Stage,
} from './dockerfile.js'
import type { Problem } from './problem.js'

const PATH_DIRS = new Set(['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'])

/**
 * The Node lines Keygate supports (README, "Supported Node"): LTS lines that are not end-of-life. CI runs the
 * suite on 24; Node 20 still runs it but reached end of life in April 2026, so no image may ship it.
 */
export const SUPPORTED_NODE_LINES = [24, 26]

const RUNTIME_FILES: Array<[string, string]> = [
  [
    'package.json',
    'it makes dist/ ES modules ("type": "module"), and the OpenAPI plugin reads the version from it at run time',
  ],
  ['node_modules', 'the production dependencies (fastify, ioredis, …) the server imports'],
  ['dist', 'the compiled server'],
]

export interface DockerfileOptions {
  /** The .dockerignore's text; default `<contextDir>/.dockerignore` (none: the whole context is sent). */
  dockerignore?: string
  /** How problems name the .dockerignore; default `.dockerignore`. */
  dockerignoreWhere?: string
}

/**
 * The Dockerfile lints clean (dockerfile-utils: every warning counts), and its final stage runs as a numeric
 * non-root user, has a HEALTHCHECK on /livez or /readyz, copies package.json, node_modules and dist into its
 * WORKDIR, and has an exec-form ENTRYPOINT whose program is in the build output (`contextDir`, after
 * `npm run build`) and made executable. Every stage starts from the official node image on a line Keygate supports
 * (SUPPORTED_NODE_LINES), named by its major version: a floating tag (`lts`, `latest`) moves on by itself.
 * The build stage is given, by its COPYs and past the .dockerignore, what it compiles: see buildInputProblems.
 */
export function checkDockerfile(
  path: string,
  contextDir: string,
  where = 'Dockerfile',
  options: DockerfileOptions = {},
): Problem[] {
  const text = readFileSync(path, 'utf8')
  const ignorePath = join(contextDir, '.dockerignore')
  const dockerignore = options.dockerignore ?? (existsSync(ignorePath) ? readFileSync(ignorePath, 'utf8') : '')
  const problems: Problem[] = validate(text).map((diagnostic) => ({
    where: `${where}:${diagnostic.range.start.line + 1}`,
    message: typeof diagnostic.message === 'string' ? diagnostic.message : diagnostic.message.value,
  }))
  for (const base of baseImages(text)) {
    const message = nodeLineProblem(base)
    if (message) problems.push({ where: `${where}:${base.line}`, message })
  }
  const stages = parseDockerfile(text)
  const final = stages.at(-1)
  if (!final) return [...problems, { where, message: 'no FROM' }]
  const last = (keyword: string) => final.instructions.filter((instruction) => instruction.keyword === keyword).at(-1)
  const add = (instruction: Instruction | undefined, message: string) =>
    problems.push({ where: instruction ? `${where}:${instruction.line}` : where, message })

  const user = last('USER')
  const uid = user && /^(\d+)(?::\d+)?$/.exec(user.args)?.[1]
  if (uid === undefined)
    add(user, 'the final stage has no numeric USER (uid[:gid]): Kubernetes runAsNonRoot can only verify a number')
  else if (Number(uid) === 0) add(user, 'the final stage runs as root (USER 0)')
  const healthcheck = last('HEALTHCHECK')
  if (!healthcheck || /^NONE$/i.test(healthcheck.args)) add(healthcheck, 'the final stage has no HEALTHCHECK')
  else if (!/\/(livez|readyz)\b/.test(healthcheck.args))
    add(healthcheck, 'the HEALTHCHECK calls neither /livez nor /readyz: Keygate answers its health on those paths only')

  // What the process needs beside the entrypoint, in the directory above dist/ (the final WORKDIR).
  const app = finalWorkdir(final)
  for (const [name, why] of RUNTIME_FILES) {
    const target = posix.join(app, name)
    const copied = final.instructions.some(
      (instruction) => instruction.keyword === 'COPY' && coveredBy(instruction, target) !== undefined,
    )
    if (!copied) add(final.instructions[0], `the final stage copies no ${name} to ${target}: ${why}`)
  }

  const entrypoint = last('ENTRYPOINT')
  const found: { built?: { target: string; built: string } } = {}
  if (!entrypoint) add(undefined, 'the final stage has no ENTRYPOINT')
  else if (!entrypoint.exec?.length)
    add(
      entrypoint,
      'ENTRYPOINT is not in exec (JSON) form: under a shell, SIGTERM never reaches the process and it cannot drain',
    )
  else for (const message of entrypointProblems(stages, final, entrypoint, contextDir, found)) add(entrypoint, message)
  problems.push(
    ...buildInputProblems({
      stages,
      contextDir,
      dockerignore: parseDockerignore(dockerignore),
      entrypoint: entrypoint && found.built && { instruction: entrypoint, ...found.built },
      where,
      dockerignoreWhere: options.dockerignoreWhere ?? '.dockerignore',
    }),
  )
  return problems
}

/** What is wrong with the Node line a base image runs, if anything. */
function nodeLineProblem(base: BaseImage): string | undefined {
  const lines = SUPPORTED_NODE_LINES.join(' or ')
  const subject = `${base.stage ? `the ${base.stage} stage's` : 'a'} base image`
  if (base.image === undefined) {
    const names = base.args.map((arg) => arg.name).join(', ') || base.written
    return `${subject} ${base.written}: ${names} has no default, so the image it ships cannot be told; default it to node:<${SUPPORTED_NODE_LINES.join('|')}>-…`
  }
  const image = base.args.length
    ? `${base.image} (from ${base.args.map((arg) => `ARG ${arg.name}, line ${arg.line}`).join('; ')})`
    : base.image
  // [registry/]repository[:tag][@digest]: the tag is after the last colon of the last path segment.
  const reference = base.image.replace(/@.*$/, '')
  const slash = reference.lastIndexOf('/')
  const colon = reference.lastIndexOf(':')
  const repository = colon > slash ? reference.slice(0, colon) : reference
  const tag = colon > slash ? reference.slice(colon + 1) : 'latest'
  // node, library/node, docker.io/library/node, and mirrors of Docker Hub's library (…/library/node).
  if (!/^(?:node|(?:.+\/)?library\/node)$/.test(repository)) {
    return `${subject} ${image} is not the official node image: cannot tell which Node it runs (use node:<${SUPPORTED_NODE_LINES.join('|')}>-bookworm-slim)`
  }
  const major = /^(\d+)(?:[.-]|$)/.exec(tag)?.[1]
  if (major === undefined) {
    return `${subject} ${image} names no Node line: the tag ${tag} moves to another major version by itself; pin an LTS line Keygate supports (${lines})`
  }
  if (!SUPPORTED_NODE_LINES.includes(Number(major))) {
    return `${subject} ${image} runs Node ${major}, not an LTS line Keygate supports (${lines})`
  }
  return undefined
}

/** What is wrong with the file the ENTRYPOINT runs; when another stage builds it, `found.built` says where. */
function entrypointProblems(
  stages: Stage[],
  final: Stage,
  entrypoint: Instruction,
  contextDir: string,
  found: { built?: { target: string; built: string } },
): string[] {
  const [program = '', script] = entrypoint.exec!
  let target: string | undefined
  if (program === 'node' && script) target = posix.resolve(entrypoint.workdir, script)
  else if (program.includes('/')) target = posix.resolve(entrypoint.workdir, program)
  else target = linkTarget(final, program)
  if (!target)
    return [
      `ENTRYPOINT ${program}: no \`ln -s <program> /usr/local/bin/${program}\` (or another PATH directory) in the final stage says what it runs`,
    ]

  // Follow the target back through the COPY that put it there (the last one wins, as in the build).
  const copy = final.instructions
    .filter((instruction) => instruction.keyword === 'COPY' && coveredBy(instruction, target) !== undefined)
    .at(-1)
  if (!copy) return [`ENTRYPOINT runs ${target}, which no COPY puts in the final stage`]
  const { source, from } = coveredBy(copy, target)!
  let contextPath = source
  let built = target
  if (from !== undefined) {
    const stage = stageNamed(stages, from)
    if (!stage)
      return [`ENTRYPOINT runs ${target}, copied from ${JSON.stringify(from)}, which is not a stage of this Dockerfile`]
    const workdir = finalWorkdir(stage)
    built = posix.resolve(workdir, source)
    contextPath = posix.relative(workdir, built)
    if (contextPath.startsWith('..'))
      return [
        `ENTRYPOINT runs ${target}, built at ${built}, outside the stage's WORKDIR ${workdir}: cannot tell which file of the build it is`,
      ]
    found.built = { target, built }
  }
  const problems: string[] = []
  if (!existsSync(join(contextDir, contextPath))) {
    problems.push(
      `ENTRYPOINT runs ${target}, which the build makes from ${contextPath}: not found in ${contextDir} (does \`npm run build\` write it?)`,
    )
  }
  if (program !== 'node' && !madeExecutable(stages, [target, built])) {
    problems.push(
      `ENTRYPOINT runs ${target} by its shebang, but no RUN chmod makes it executable (the build writes 0644)`,
    )
  }
  return problems
}

/** The file a `ln -s <file> <PATH dir>/<name>` in the stage points `name` at. */
function linkTarget(stage: Stage, name: string): string | undefined {
  for (const run of stage.instructions.filter((instruction) => instruction.keyword === 'RUN').reverse()) {
    for (const match of run.args.matchAll(/\bln\s+-[a-zA-Z]*s[a-zA-Z]*\s+(\S+)\s+(\S+)/g)) {
      const link = posix.resolve(run.workdir, match[2]!)
      const linkName = match[2]!.endsWith('/') ? posix.basename(match[1]!) : posix.basename(link)
      const dir = match[2]!.endsWith('/') ? link : posix.dirname(link)
      if (linkName === name && PATH_DIRS.has(dir)) return posix.resolve(run.workdir, match[1]!)
    }
  }
  return undefined
}

/** When `copy` puts `target` in place: the source path it comes from and the stage (`--from`) it is in. */
function coveredBy(copy: Instruction, target: string): { source: string; from: string | undefined } | undefined {
  const words = copy.exec ?? copy.args.split(/\s+/)
  const flags = words.filter((word) => word.startsWith('--'))
  const paths = words.filter((word) => !word.startsWith('--'))
  const destination = posix.resolve(copy.workdir, paths.at(-1) ?? '.')
  const sources = paths.slice(0, -1)
  const from = flags.find((flag) => flag.startsWith('--from='))?.slice('--from='.length)
  const rest = posix.relative(destination, target)
  if (rest.startsWith('..') || posix.isAbsolute(rest)) return undefined
  if (sources.length === 1) return { source: posix.join(sources[0]!, rest), from }
  // Several sources into a directory: each lands under its own name.
  const [first, ...inner] = rest.split('/')
  const source = sources.find((candidate) => posix.basename(candidate) === first)
  return source === undefined ? undefined : { source: posix.join(source, ...inner), from }
}

function madeExecutable(stages: Stage[], paths: string[]): boolean {
  return stages.some((stage) =>
    stage.instructions.some((instruction) => {
      if (instruction.keyword !== 'RUN') return false
      return instruction.args.split(/&&|;|\|\|/).some((command) => {
        const [name, ...words] = command.trim().split(/\s+/)
        if (name !== 'chmod') return false
        const mode = words.find((word) => !word.startsWith('-'))
        const executable =
          mode !== undefined && (/^[0-7]*[1357][0-7]{2}$/.test(mode) || /^[ugoa]*\+[rwxX]*x/.test(mode))
        return executable && words.some((word) => paths.includes(posix.resolve(instruction.workdir, word)))
      })
    }),
  )
}
