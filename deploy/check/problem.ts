/** One thing wrong with the deployment: where it is (a kustomization, an object, a container) and what. */
export interface Problem {
  where: string
  message: string
  /** A value an example leaves for the user to set (placeholders.ts): a note, not a problem, in a template. */
  placeholder?: true
}

export function formatProblem(problem: Problem): string {
  return `${problem.where}: ${problem.message}`
}
