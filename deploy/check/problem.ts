/** One thing wrong with the deployment: where it is (a kustomization, an object, a container) and what. */
export interface Problem {
  where: string
  message: string
}

export function formatProblem(problem: Problem): string {
  return `${problem.where}: ${problem.message}`
}
