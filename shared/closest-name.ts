/**
 * "Did you mean …?": the known name nearest to one that was not recognised, by edit distance with case
 * ignored. Used for unknown operations, unknown fields, root-key permissions and deploy variables.
 */
export function closestName(name: string, known: Iterable<string>, maxDistance = 2): string | undefined {
  // Past this length a name is not a typo of a known one, and the distance would cost O(length²) per candidate.
  if (name.length > 80) return undefined
  const lower = name.toLowerCase()
  let best: { name: string; distance: number } | undefined
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase())
    if (distance <= maxDistance && (!best || distance < best.distance)) best = { name: candidate, distance }
  }
  return best?.name
}

/** Levenshtein distance: insertions, deletions and substitutions. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}
