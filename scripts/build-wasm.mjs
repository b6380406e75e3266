// `npm run build:wasm`: builds the browser backend into wasm/ (toolhost_wasm.js and
// toolhost_wasm_bg.wasm), from crates/toolhost-wasm.
//
// It installs what it needs when it is missing: the rustup target wasm32-unknown-unknown,
// and wasm-bindgen-cli at exactly the version Cargo.lock locks wasm-bindgen to (a CLI of
// another version refuses the module), under target/tools. It then prints the .wasm's
// size, raw, gzipped and with brotli.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import zlib, { brotliCompressSync, gzipSync } from 'node:zlib'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const TARGET = 'wasm32-unknown-unknown'
const out = join(root, 'wasm')

function run(cmd, args, options = {}) {
  console.error(`> ${cmd} ${args.join(' ')}`)
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...options })
  if (r.error) throw new Error(`${cmd} could not start: ${r.error.message}. The browser backend needs a Rust toolchain: https://rustup.rs`)
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed with exit code ${r.status}`)
}

function lockedVersion(name) {
  const lock = readFileSync(join(root, 'Cargo.lock'), 'utf8')
  const m = lock.match(new RegExp(`\\[\\[package\\]\\]\\nname = "${name}"\\nversion = "([^"]+)"`))
  if (!m) throw new Error(`${name} is not in Cargo.lock`)
  return m[1]
}

function bindgenAt(path) {
  try {
    return execFileSync(path, ['--version'], { encoding: 'utf8' }).trim().split(/\s+/)[1]
  } catch {
    return undefined
  }
}

const installed = execFileSync('rustup', ['target', 'list', '--installed'], { encoding: 'utf8' })
if (!installed.split('\n').includes(TARGET)) run('rustup', ['target', 'add', TARGET])

const version = lockedVersion('wasm-bindgen')
const tools = join(root, 'target', 'tools')
let bindgen = 'wasm-bindgen'
if (bindgenAt(bindgen) !== version) {
  bindgen = join(tools, 'bin', 'wasm-bindgen')
  if (bindgenAt(bindgen) !== version) {
    console.error(`wasm-bindgen-cli ${version} is needed (the version Cargo.lock locks wasm-bindgen to); installing it under target/tools (a few minutes, once)`)
    const install = ['install', 'wasm-bindgen-cli', '--version', `=${version}`, '--root', tools]
    try {
      run('cargo', [...install, '--locked'])
    } catch {
      // A registry mirror may lack a version the CLI's own lock file names: let cargo
      // pick compatible ones instead.
      console.error('the locked dependencies of wasm-bindgen-cli are not all available; installing with compatible versions')
      run('cargo', install)
    }
  }
}

run('cargo', ['build', '-p', 'toolhost-wasm', '--target', TARGET, '--profile', 'wasm'])
const built = join(root, 'target', TARGET, 'wasm', 'toolhost_wasm.wasm')
// --weak-refs: a RegistryCore or EngineCore the page drops frees its wasm memory too.
// --remove-name-section: function names are a fifth of the file (over 600 KB) and a page
// never needs them (a panic aborts; the JS side reports errors by their codes).
// TOOLHOST_WASM_NAMES=1 keeps them, for a profile that names the engine's functions.
// wasm-opt (binaryen) is not run: measured on this build, -Oz / -Os / -O2 make the file
// 9% smaller raw but 4% larger gzipped (865 KB -> 900-902 KB), and pages are sent gzipped.
run(bindgen, ['--target', 'web', '--no-typescript', '--weak-refs', ...(process.env.TOOLHOST_WASM_NAMES ? [] : ['--remove-name-section']), '--remove-producers-section', '--out-dir', out, built])

const wasm = join(out, 'toolhost_wasm_bg.wasm')
if (!existsSync(wasm)) throw new Error(`wasm-bindgen did not write ${wasm}`)
const bytes = readFileSync(wasm)
const kb = (n) => `${Math.round(n / 1000).toLocaleString('en')} KB`
const gzip = gzipSync(bytes, { level: 9 }).length
const brotli = brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length
console.error(`wasm/toolhost_wasm_bg.wasm: ${kb(statSync(wasm).size)}, ${kb(gzip)} gzipped (-9), ${kb(brotli)} with brotli (11)`)
