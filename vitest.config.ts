import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Every file that needs Redis starts its own server on a free port: files never share state.
    fileParallelism: true,
    // Two files at a time: on 2 cores vitest's default is one (cores - 1), and most files wait on Redis or processes.
    maxWorkers: 2,
    // The JSON report lets .ci/run print a one-line "N passed, N failed" summary.
    reporters: ['default', ['json', { outputFile: '.tmp/vitest-report.json' }]],
  },
})
