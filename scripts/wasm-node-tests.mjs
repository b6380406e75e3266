// `npm run test:wasm-node`: the node suite (__test__/, or the files given) on the engine's
// WebAssembly build, the backend Node falls back to when no native addon loads: node --test
// with TOOLHOST_BACKEND=wasm, which child processes the tests start inherit.
//
// Left out, with the reason: the journal's files. A journal needs the native addon (its
// IO runs on a thread of the addon's; the WebAssembly build refuses the option, naming
// why), so they test nothing on this backend.
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const NEEDS_ADDON = /^journal/
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const given = process.argv.slice(2)
// The files, listed: Node 22 reads `node --test <folder>` as a file name, not a folder.
const files = given.length > 0 ? given : readdirSync(join(root, '__test__')).filter((f) => f.endsWith('.test.mjs') && !NEEDS_ADDON.test(f)).map((f) => join('__test__', f))
const r = spawnSync(process.execPath, ['--test', ...files], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, TOOLHOST_BACKEND: 'wasm' },
})
process.exit(r.status ?? 1)
