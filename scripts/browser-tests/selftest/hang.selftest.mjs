// A test that never yields: no per-test timeout can stop it (the page's only
// thread is busy), so the runner's per-file time limit must. The selftest runs
// this file with a short limit, then other files in the same browser.
import { test } from 'node:test'

test('runs before the hang', () => {})

test('spins forever', () => {
  for (;;) {
    // busy
  }
})
