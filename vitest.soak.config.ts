import { defineConfig } from 'vitest/config'

/** `npm run soak`: the bounded soak test, kept out of `npm test`. */
export default defineConfig({
  test: { include: ['bench/soak.test.ts'], testTimeout: 900_000, hookTimeout: 60_000, pool: 'forks' },
})
