import dockerignore from '@balena/dockerignore'

/** A pattern of a .dockerignore, by line. */
export interface IgnorePattern {
  line: number
  /** As written (`!cli/`). */
  text: string
}

/** What a .dockerignore lets into the build context. */
export interface DockerIgnore {
  /** Whether the build context holds this file (a path relative to the context, `/`-separated). */
  admits(path: string): boolean
  /** The pattern that keeps `path` out (the last one that matches it), if one does. */
  excludedBy(path: string): IgnorePattern | undefined
}

/**
 * Docker's own matching, from @balena/dockerignore (a port of Moby's): patterns are anchored at the context's root,
 * `*` does not cross `/`, a pattern that matches a folder matches everything under it, and the last pattern that
 * matches decides, so `*` then `!cli/` lets cli/ back in. (The `ignore` package implements .gitignore instead:
 * there `*` matches at every depth and a folder's files stay out after `!cli/`.) Case-sensitive, as on Linux.
 */
export function parseDockerignore(text: string): DockerIgnore {
  // `.default`: its types declare the CommonJS export as `default` (the package sets factory.default = factory).
  // ignorecase: the package's default is true, Docker's on Linux is false.
  const matcher = dockerignore.default({ ignorecase: false }).add(text)
  // The same patterns one by one, to tell which decided. A pattern matches whether or not it is negated.
  const patterns = text
    .split(/\r?\n/)
    .map((raw, index) => ({ line: index + 1, text: raw.trim() }))
    .filter(({ text }) => text !== '' && !text.startsWith('#'))
    .map((pattern) => {
      const negated = pattern.text.startsWith('!')
      const body = negated ? pattern.text.slice(1).trim() : pattern.text
      return { pattern, negated, alone: dockerignore.default({ ignorecase: false }).add(body) }
    })
  return {
    admits: (path) => !matcher.ignores(path),
    excludedBy(path) {
      if (!matcher.ignores(path)) return undefined
      const last = patterns.filter(({ alone }) => alone.ignores(path)).at(-1)
      return last && !last.negated ? last.pattern : undefined
    },
  }
}
