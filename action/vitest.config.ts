import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__tests__/**/*.test.ts'],
    // One temporary folder for the whole run, removed at its end (scratch.ts).
    globalSetup: ['__tests__/scratch.ts'],
    // Integration tests run real loads; one file at a time keeps them honest on 2 cores.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 300_000
  }
})
