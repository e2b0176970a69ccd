/** A command's module: runs it, and answers 'serving' (keep the process) or an exit code. */
export interface CommandModule {
  run(argv: string[], env: NodeJS.ProcessEnv): Promise<'serving' | number>
}
