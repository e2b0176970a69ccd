import { defineConfig } from 'vitest/config'

/**
 * `npm run soak`: the bounded soak and the chaos soak, kept out of `npm test`. One at a time: each measures what the
 * other would disturb.
 */
export default defineConfig({
  test: {
    include: ['bench/soak.test.ts', 'bench/chaos-soak.test.ts'],
    testTimeout: 900_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: false,
  },
})
