import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, posix, relative, resolve, sep } from 'node:path'
import ts from 'typescript'
import type { DockerIgnore } from './dockerignore.js'
import { stageNamed, type Instruction, type Stage } from './dockerfile.js'
import type { Problem } from './problem.js'

/** The RUN that compiles: `npm run build` (package.json's build script) or tsc itself. */
const BUILD_COMMAND = /\bnpm\s+(?:run|run-script)\s+build\b|(?:^|[\s;&|(])(?:npx\s+)?tsc\b/

export interface BuildInputs {
  stages: Stage[]
  /** The build context: the checkout the image is built from (tsconfig.json, the sources). */
  contextDir: string
  dockerignore: DockerIgnore
  /** What the final stage's ENTRYPOINT runs, when it is copied from another stage: its path there. */
  entrypoint: { instruction: Instruction; target: string; built: string } | undefined
  where: string
  dockerignoreWhere: string
}

/** A file the build stage needs, and why: grouped by the tsconfig `include` entry (or file) it belongs to. */
interface Need {
  file: string
  group: string
  why: string
}

/**
 * What the build stage (the one whose RUN compiles) must be given from the build context, derived from the project:
 * the tsconfig.json it compiles, package.json (for `npm run`), and the ENTRYPOINT's program's source (the .ts file
 * tsc writes it from, by the tsconfig's outDir and rootDir) with every file that source imports, transitively (static
 * and dynamic imports, resolved as tsc resolves them), grouped by the tsconfig `include` entry they are in. Each such
 * file must be COPY'd into the build stage, before the compiling RUN, at the same path under its WORKDIR, and not
 * be excluded by .dockerignore. The build transpiles whatever it is given and says nothing of a folder that is missing.
 * `include` entries the program never imports (bench, deploy: tooling) need not be in the image.
 */
export function buildInputProblems(inputs: BuildInputs): Problem[] {
  const { stages, contextDir, dockerignore, entrypoint, where } = inputs
  const build = buildStep(stages)
  if (!build) return [{ where, message: 'no stage runs `npm run build` or tsc: cannot tell what the image compiles' }]
  const { run, command } = build
  const at = (instruction: Instruction) => `${where}:${instruction.line}`
  const workdir = run.workdir
  const project = projectOf(run.args, contextDir)
  const config = readProject(contextDir, project)
  if (typeof config === 'string') return [{ where: at(run), message: `\`${command}\`: ${config}` }]

  const needs: Need[] = [
    { file: project, group: project, why: `the project \`${command}\` compiles` },
    ...config.extends.map((file) => ({ file, group: file, why: `${project} extends it` })),
  ]
  if (/\bnpm\b/.test(command)) needs.push({ file: 'package.json', group: 'package.json', why: 'npm runs its scripts' })
  for (const script of buildScripts(run.args, contextDir))
    needs.push({ file: script, group: script, why: `\`${command}\` runs it` })
  const problems: Problem[] = []
  const given = (file: string) => givenAt(stages, build, file, contextDir) === posix.join(workdir, file)

  const source = entrypoint && entrypointSource(entrypoint.built, workdir, config, contextDir)
  if (entrypoint && source?.file === undefined && source?.candidates && existsSync(join(contextDir, source.built))) {
    // The build output here has it, but nothing in the tree compiles to it: a stale dist/ must not pass the check.
    problems.push({
      where: at(entrypoint.instruction),
      message: `ENTRYPOINT runs ${entrypoint.target}, which the build would write from ${source.candidates.join(' or ')}: not in ${contextDir} (the ${source.built} there is left over from an older build)`,
    })
  }
  if (entrypoint && source?.file !== undefined) {
    const file = source.file
    const program = `the ENTRYPOINT's program (${source.built})`
    const reached = importClosure(contextDir, file, config.options)
    const inGroup = new Map<string, number>()
    for (const path of reached) {
      const group = groupOf(path, config.include)
      inGroup.set(group, (inGroup.get(group) ?? 0) + 1)
    }
    for (const path of reached) {
      const group = groupOf(path, config.include)
      const count = inGroup.get(group)!
      const files = `${count} file${count === 1 ? '' : 's'}`
      const why =
        group === path
          ? `${program} ${path === file ? 'is built from' : 'imports'} it`
          : config.include.includes(group)
            ? `${project} includes ${group}, and ${program} needs ${files} there`
            : `${program} needs ${files} there`
      needs.push({ file: path, group, why })
    }
    const built = `${entrypoint.target}, which \`${command}\` compiles from ${file}`
    if (!given(file))
      problems.push({
        where: at(entrypoint.instruction),
        message: `ENTRYPOINT runs ${built}, but no COPY before it gives the build stage that file (at ${posix.join(workdir, file)})`,
      })
    const pattern = dockerignore.excludedBy(file)
    if (!dockerignore.admits(file))
      problems.push({
        where: at(entrypoint.instruction),
        message: `ENTRYPOINT runs ${built}, but .dockerignore keeps that file out of the build context${pattern ? ` (line ${pattern.line}: \`${pattern.text}\`)` : ''}`,
      })
  }

  // One problem per group: the files of it that no COPY gives, then per .dockerignore pattern that keeps some out.
  for (const [group, members] of groupBy(needs, (need) => need.group)) {
    const { why } = members[0]!
    const files = members.map((need) => need.file)
    const single = files.length === 1 && files[0] === group
    const name = single ? group : `${group}/`
    const missing = files.filter((file) => !given(file))
    if (missing.length)
      problems.push({
        where: at(run),
        message: single
          ? `the build stage's \`${command}\` is not given ${group} (${why}): no COPY before it puts it at ${posix.join(workdir, group)}`
          : `the build stage's \`${command}\` is not given ${name}: ${why}, but no COPY before it puts ${missing.length === files.length ? 'them' : `${missing.length} of them`} (${list(missing)}) in ${posix.join(workdir, group)}; the build goes on without them and says nothing`,
      })
    const excluded = groupBy(
      files.filter((file) => !dockerignore.admits(file)),
      (file) => dockerignore.excludedBy(file)?.line ?? 0,
    )
    for (const [line, kept] of excluded) {
      const pattern = dockerignore.excludedBy(kept[0]!)
      const by = pattern ? `\`${pattern.text}\` keeps` : 'it keeps'
      const all = kept.length === files.length
      problems.push({
        where: line ? `${inputs.dockerignoreWhere}:${line}` : inputs.dockerignoreWhere,
        message: single
          ? `${by} ${name} out of the build context (${why}): let it in (\`!${name}\`)`
          : all
            ? `${by} ${name} out of the build context: ${why} (${list(kept)}): let it in (\`!${name}\`)`
            : `${by} ${list(kept)} out of the build context: ${why}, ${kept.length === 1 ? 'this one' : `these ${kept.length}`} among them`,
      })
    }
  }
  return problems
}

/** The first RUN of any stage that compiles, and the words of it that do. */
function buildStep(stages: Stage[]): { stage: Stage; run: Instruction; command: string } | undefined {
  for (const stage of stages) {
    for (const run of stage.instructions) {
      const match = run.keyword === 'RUN' ? BUILD_COMMAND.exec(run.args) : null
      if (match) return { stage, run, command: match[0].trim().replace(/^[;&|(]\s*/, '') }
    }
  }
  return undefined
}

/**
 * The scripts package.json's build script runs with node (`node scripts/build.mjs`), with the project scripts they
 * import by relative path, transitively, as context paths: a build that transpiles the tree runs them.
 */
function buildScripts(run: string, contextDir: string): string[] {
  if (!/\bnpm\s+(?:run|run-script)\s+build\b/.test(run)) return []
  let command: string
  try {
    const manifest = JSON.parse(readFileSync(join(contextDir, 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>
    }
    command = manifest.scripts?.build ?? ''
  } catch {
    return []
  }
  const queue = [...command.matchAll(/(?:^|[\s;&|(])node\s+(?:-\S+\s+)*([^\s;&|)]+\.m?js)\b/g)].map((m) => m[1]!)
  const seen = new Set<string>()
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const path = posix.normalize(file)
    if (seen.has(path) || path.startsWith('..') || !existsSync(join(contextDir, path))) continue
    seen.add(path)
    for (const { fileName } of ts.preProcessFile(readFileSync(join(contextDir, path), 'utf8'), true, true)
      .importedFiles)
      if (/^\.\.?\//.test(fileName)) queue.push(posix.join(posix.dirname(path), fileName))
  }
  return [...seen].sort()
}

/** The tsconfig the RUN compiles, as a context path: `tsc -p X` in it or in package.json's build script. */
function projectOf(run: string, contextDir: string): string {
  let command = run
  if (/\bnpm\s+(?:run|run-script)\s+build\b/.test(run)) {
    try {
      const manifest = JSON.parse(readFileSync(join(contextDir, 'package.json'), 'utf8')) as {
        scripts?: Record<string, string>
      }
      command = manifest.scripts?.build ?? ''
    } catch {
      command = ''
    }
  }
  const project = /(?:^|\s)(?:-p|--project)(?:\s+|=)(\S+)/.exec(command)?.[1] ?? 'tsconfig.json'
  const path = posix.normalize(project)
  return isDirectory(join(contextDir, path)) ? posix.join(path, 'tsconfig.json') : path
}

interface Project {
  options: ts.CompilerOptions
  /** `include` as written, each a context path (a glob's folder before its first wildcard). */
  include: string[]
  /** The configs it extends, as context paths. */
  extends: string[]
}

function readProject(contextDir: string, project: string): Project | string {
  const path = join(contextDir, project)
  if (!existsSync(path)) return `${project} is not in ${contextDir}`
  let unrecoverable: string | undefined
  const parsed = ts.getParsedCommandLineOfConfigFile(
    path,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        unrecoverable = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
      },
    },
  )
  if (!parsed) return `cannot read ${project}: ${unrecoverable ?? 'unknown error'}`
  const configDir = dirname(path)
  const raw = (parsed.raw as { include?: unknown } | undefined)?.include
  const include = (Array.isArray(raw) ? raw : ['**/*'])
    .filter((entry): entry is string => typeof entry === 'string')
    .map((entry) => {
      const static_ = entry.split('/').findIndex((part) => /[*?[]/.test(part))
      const folder = static_ === -1 ? entry : entry.split('/').slice(0, static_).join('/')
      return contextPath(contextDir, resolve(configDir, folder))
    })
  const extendsFiles = (
    (parsed.options.configFile as ts.TsConfigSourceFile | undefined)?.extendedSourceFiles ?? []
  ).map((file) => contextPath(contextDir, file))
  return { options: parsed.options, include, extends: extendsFiles.filter((file) => !file.startsWith('..')) }
}

/** The source of the file the ENTRYPOINT runs: `dist/cli/keygate.js` ← `cli/keygate.ts` (outDir, rootDir). */
function entrypointSource(
  target: string,
  workdir: string,
  project: Project,
  contextDir: string,
): { built: string; file?: string; candidates?: string[] } | undefined {
  const built = posix.relative(workdir, target)
  if (built.startsWith('..')) return undefined
  const { outDir, rootDir } = project.options
  const inOut = posix.relative(outDir ? contextPath(contextDir, outDir) : '.', built)
  if (inOut.startsWith('..')) return { built } // not tsc's output: nothing to follow
  const stem = posix.join(rootDir ? contextPath(contextDir, rootDir) : '.', inOut)
  const sources: Record<string, string[]> = { '.js': ['.ts', '.tsx'], '.mjs': ['.mts'], '.cjs': ['.cts'] }
  const extension = posix.extname(stem)
  const candidates = (sources[extension] ?? []).map((ext) => stem.slice(0, -extension.length) + ext)
  if (candidates.length === 0) return { built }
  return { built, file: candidates.find((file) => existsSync(join(contextDir, file))), candidates }
}

/** `entry` and the project files it imports, transitively (static, dynamic, type-only), as context paths. */
function importClosure(contextDir: string, entry: string, options: ts.CompilerOptions): string[] {
  const seen = new Set<string>([join(contextDir, entry)])
  const queue = [...seen]
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const { importedFiles, referencedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
    for (const { fileName } of importedFiles) {
      const resolved = ts.resolveModuleName(fileName, file, options, ts.sys).resolvedModule
      if (resolved && !resolved.isExternalLibraryImport) add(resolved.resolvedFileName)
    }
    for (const { fileName } of referencedFiles) add(resolve(dirname(file), fileName))
  }
  return [...seen].map((file) => contextPath(contextDir, file)).sort()

  function add(file: string): void {
    const inside = contextPath(contextDir, file)
    if (seen.has(file) || inside.startsWith('..') || inside.split('/').includes('node_modules') || !existsSync(file))
      return
    seen.add(file)
    queue.push(file)
  }
}

/** The `include` entry a file is in (the longest), else its first folder (or itself, at the top). */
function groupOf(file: string, include: string[]): string {
  const entry = include
    .filter((folder) => folder === '.' || file === folder || file.startsWith(`${folder}/`))
    .sort((a, b) => b.length - a.length)[0]
  if (entry !== undefined && entry !== '.') return entry
  return file.split('/')[0]!
}

/**
 * Where the build stage has the context file `file` by the time it compiles: the COPYs (and ADDs) from the build
 * context before the compiling RUN, and those of the stages it is built on (`FROM build AS …`). The last one wins.
 */
function givenAt(
  stages: Stage[],
  build: { stage: Stage; run: Instruction },
  file: string,
  contextDir: string,
): string | undefined {
  const chain: Instruction[] = []
  const seen = new Set<Stage>()
  const collect = (stage: Stage, until: Instruction | undefined): void => {
    if (seen.has(stage)) return
    seen.add(stage)
    const from = stage.instructions[0]
    const base = from?.keyword === 'FROM' ? from.args.split(/\s+/).find((word) => !word.startsWith('--')) : undefined
    const parent = base === undefined ? undefined : stageNamed(stages, base)
    if (parent && stages.indexOf(parent) < stages.indexOf(stage)) collect(parent, undefined)
    const end = until ? stage.instructions.indexOf(until) : stage.instructions.length
    chain.push(...stage.instructions.slice(0, end))
  }
  collect(build.stage, build.run)
  let landed: string | undefined
  for (const instruction of chain) {
    if (instruction.keyword !== 'COPY' && instruction.keyword !== 'ADD') continue
    landed = landing(instruction, file, contextDir) ?? landed
  }
  return landed
}

/** Where a COPY from the build context puts the context file `file`, if it copies it (Docker's rules). */
function landing(copy: Instruction, file: string, contextDir: string): string | undefined {
  const { flags, paths } = copyArguments(copy.args)
  if (flags.some((flag) => flag.startsWith('--from='))) return undefined
  if (paths.length < 2) return undefined
  const written = paths.at(-1)!
  const sources = paths.slice(0, -1).filter((source) => !/^[a-z]+:\/\//i.test(source))
  const destination = posix.resolve(copy.workdir, written)
  // Into a folder when the destination says so or there can be several sources; else a file is renamed.
  const intoFolder = written.endsWith('/') || sources.length > 1 || sources.some((source) => /[*?]/.test(source))
  for (const source of sources) {
    const parts = posix.normalize(`/${source}`).slice(1).replace(/\/$/, '').split('/').filter(Boolean)
    const fileParts = file.split('/')
    if (parts.length > fileParts.length) continue
    if (!parts.every((part, index) => globPart(part).test(fileParts[index]!))) continue
    const matched = fileParts.slice(0, parts.length).join('/') || '.'
    // A folder's contents go into the destination; a file goes into it (by its name) or becomes it.
    if (matched !== file || isDirectory(join(contextDir, matched)))
      return posix.join(destination, posix.relative(matched, file))
    return intoFolder ? posix.join(destination, posix.basename(file)) : destination
  }
  return undefined
}

/** A COPY's flags, then its paths: `--chown=… a b`, or the JSON form after the flags `--chown=… ["a", "b"]`. */
function copyArguments(args: string): { flags: string[]; paths: string[] } {
  const flags: string[] = []
  let rest = args.trim()
  for (let flag = /^(--\S+)\s*/.exec(rest); flag; flag = /^(--\S+)\s*/.exec(rest)) {
    flags.push(flag[1]!)
    rest = rest.slice(flag[0].length)
  }
  if (rest.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(rest)
      if (Array.isArray(parsed) && parsed.every((item) => typeof item === 'string')) return { flags, paths: parsed }
    } catch {
      // not JSON: the shell form's words
    }
  }
  return { flags, paths: rest.split(/\s+/).filter(Boolean) }
}

/** One path segment of a COPY source as a pattern: `*` and `?` as in Go's filepath.Match; the rest literal. */
function globPart(part: string): RegExp {
  const pattern = part
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '[^/]*')
    .replace(/\?/g, '[^/]')
  return new RegExp(`^${pattern}$`)
}

function contextPath(contextDir: string, path: string): string {
  return relative(contextDir, path).split(sep).join('/') || '.'
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

function groupBy<T, K>(items: T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>()
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item])
  return groups
}

function list(files: string[]): string {
  return files.length <= 3 ? files.join(', ') : `${files.slice(0, 3).join(', ')}, …`
}
