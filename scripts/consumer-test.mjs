// What a user of the published package gets, checked on this machine:
//
// 1. takes this platform's binary (`npm install` built it; `napi build --platform
//    --release` again when a Rust source is newer) and moves it into its platform
//    package with `napi artifacts` (npm/linux-x64-gnu/ here), as the release workflow
//    does; builds wasm/ (`npm run build:wasm`) when it is missing;
// 2. `npm pack`s the main package and that platform package;
// 3. installs both into a fresh consumer project with no Rust anywhere (every PATH
//    entry containing cargo or rustup removed, CARGO_HOME and RUSTUP_HOME empty), and
//    prints the install time and the installed size of node_modules/toolhost*;
// 4. runs the README's first example there with `node`, as ES module and as CommonJS,
//    on the native addon (no fallback warning);
// 5. installs the main package alone, still without Rust (a platform with no prebuilt
//    binary, or a browser-only app): the install succeeds, and the first example runs on
//    the WebAssembly fallback, with its one warning;
// 6. the same with TOOLHOST_BUILD_FROM_SOURCE=1: the install fails, saying that
//    building from source needs Rust and where to get it.
//
// `--from-source` adds the slow case (minutes): the main package alone with Rust and
// TOOLHOST_BUILD_FROM_SOURCE=1, so the install script builds the addon; then the first
// example runs on it, and what the build left behind is measured.
// `--keep` keeps the temporary folder (its path is printed).
//
// Times and sizes are printed, not asserted; only "no target/ folder, under 20 MB"
// is checked.
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const args = new Set(process.argv.slice(2))
const work = mkdtempSync(join(tmpdir(), 'toolhost-consumer-'))
const MAX_INSTALLED_BYTES = 20 * 1024 * 1024

let passed = 0
let failed = 0
/** Prints and counts one check; `detail` is printed when it fails. */
function check(name, ok, detail = '') {
  if (ok) passed++
  else failed++
  console.log(ok ? `ok - ${name}` : `not ok - ${name}${detail ? `: ${detail}` : ''}`)
  return ok
}

function run(cmd, argv, { cwd = root, env = process.env, inherit = false } = {}) {
  console.log(`$ ${[cmd, ...argv].join(' ')}${cwd === root ? '' : `   (in ${cwd})`}`)
  const started = performance.now()
  const r = spawnSync(cmd, argv, { cwd, env, encoding: 'utf8', stdio: inherit ? 'inherit' : 'pipe', maxBuffer: 64 * 1024 * 1024 })
  const ms = performance.now() - started
  if (r.error) throw new Error(`${cmd} could not start: ${r.error.message}`)
  return { code: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}`, stdout: r.stdout ?? '', ms }
}

function mustRun(cmd, argv, options) {
  const r = run(cmd, argv, options)
  if (r.code !== 0) {
    console.log(r.out)
    throw new Error(`${cmd} ${argv.join(' ')} failed with exit code ${r.code}`)
  }
  return r
}

const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`

function sizeOf(path) {
  const st = statSync(path)
  if (!st.isDirectory()) return st.size
  return readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name)), 0)
}

/** The latest modification time of the files under `paths` (target/ folders skipped). */
function newestMtime(paths) {
  let newest = 0
  for (const path of paths) {
    if (!existsSync(path)) continue
    const st = statSync(path)
    if (st.isDirectory()) {
      const names = readdirSync(path).filter((name) => name !== 'target')
      newest = Math.max(newest, newestMtime(names.map((name) => join(path, name))))
    } else {
      newest = Math.max(newest, st.mtimeMs)
    }
  }
  return newest
}

/** napi's name for this platform (`linux-x64-gnu`), and the target triple package.json lists for it. */
function thisPlatform() {
  const arch = { x64: 'x86_64', arm64: 'aarch64' }[process.arch]
  let abi = `${process.platform}-${process.arch}`
  let triple
  if (process.platform === 'linux') {
    const musl = readFileSync('/usr/bin/ldd', 'utf8').includes('musl')
    abi += musl ? '-musl' : '-gnu'
    triple = `${arch}-unknown-linux-${musl ? 'musl' : 'gnu'}`
  } else if (process.platform === 'darwin') {
    triple = `${arch}-apple-darwin`
  } else if (process.platform === 'win32') {
    abi += '-msvc'
    triple = `${arch}-pc-windows-msvc`
  }
  if (!pkg.napi.targets.includes(triple)) throw new Error(`${abi} has no prebuilt package (package.json napi.targets)`)
  return { abi, triple }
}

/** This environment with no way to find Rust. */
function withoutRust() {
  const env = {}
  for (const [key, value] of Object.entries(process.env)) {
    // A parent npm's settings (npm_config_*) must not leak into the consumer's npm.
    if (/^(CARGO|RUSTUP|RUSTC|RUSTFLAGS|npm_|TOOLHOST_)/i.test(key)) continue
    env[key] = value
  }
  env.PATH = (process.env.PATH ?? '').split(delimiter).filter((dir) => !/cargo|rustup/i.test(dir)).join(delimiter)
  env.CARGO_HOME = join(work, 'empty-cargo-home')
  env.RUSTUP_HOME = join(work, 'empty-rustup-home')
  mkdirSync(env.CARGO_HOME)
  mkdirSync(env.RUSTUP_HOME)
  for (const tool of ['cargo', 'rustc', 'rustup']) {
    const r = spawnSync(tool, ['--version'], { env, encoding: 'utf8' })
    if (!r.error) throw new Error(`${tool} is still found without the cargo/rustup PATH entries: ${r.stdout.trim()}`)
  }
  return env
}

/** A fresh consumer project. */
function consumerProject(name) {
  const dir = join(work, name)
  mkdirSync(dir)
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `toolhost-${name}`, version: '1.0.0', private: true }, null, 2) + '\n')
  return dir
}

// The README's first example, read from the README itself (the ```js and ```cjs blocks
// under "## Install"), so this test runs what a new user copies.
function readmeBlock(lang) {
  const readme = readFileSync(join(root, 'README.md'), 'utf8')
  const install = readme.slice(readme.indexOf('\n## Install\n'))
  const block = new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```$', 'm').exec(install)
  if (block === null) throw new Error(`README.md has no \`\`\`${lang} block under "## Install"`)
  return block[1]
}
const FIRST_EXAMPLE_ESM = readmeBlock('js')
const FIRST_EXAMPLE_CJS = readmeBlock('cjs')
const FIRST_EXAMPLE_OUTPUT = "true { city: 'Paris', tempC: 21 }\nfalse INVALID_ARGUMENTS\n"

/** Runs the first example as ESM and CJS; `fallback`: whether it must run on the
 * WebAssembly fallback (and warn once) or on the native addon (and not warn). */
function runFirstExamples(dir, env, label, { fallback = false } = {}) {
  writeFileSync(join(dir, 'first.mjs'), FIRST_EXAMPLE_ESM)
  writeFileSync(join(dir, 'first.cjs'), FIRST_EXAMPLE_CJS)
  for (const file of ['first.mjs', 'first.cjs']) {
    const r = run('node', [file], { cwd: dir, env })
    process.stdout.write(r.out.replace(/^(?=.)/gm, '    '))
    check(`${label}: node ${file} prints the example's result`, r.code === 0 && r.stdout === FIRST_EXAMPLE_OUTPUT,
      r.code === 0 ? `expected ${JSON.stringify(FIRST_EXAMPLE_OUTPUT)}, got ${JSON.stringify(r.stdout)}` : `exit code ${r.code}`)
    const warnings = r.out.match(/TOOLHOST_WASM_FALLBACK/g)?.length ?? 0
    check(`${label}: node ${file} runs on ${fallback ? 'the WebAssembly fallback, warning once' : 'the native addon, no fallback warning'}`,
      warnings === (fallback ? 1 : 0), `${warnings} fallback warnings`)
  }
}

function installedSizes(dir, label) {
  const modules = join(dir, 'node_modules')
  const ours = readdirSync(modules).filter((name) => name === 'toolhost' || name.startsWith('toolhost-'))
  let total = 0
  for (const name of ours) {
    const bytes = sizeOf(join(modules, name))
    total += bytes
    console.log(`    node_modules/${name}: ${mb(bytes)}`)
  }
  console.log(`    node_modules/toolhost*: ${mb(total)} in all; node_modules: ${mb(sizeOf(modules))}, ${readdirSync(modules).filter((n) => !n.startsWith('.')).length} top-level entries`)
  check(`${label}: no target/ folder in node_modules/toolhost`, !existsSync(join(modules, 'toolhost', 'target')))
  check(`${label}: node_modules/toolhost* under ${mb(MAX_INSTALLED_BYTES)}`, total < MAX_INSTALLED_BYTES, mb(total))
}

function listTarball(file) {
  return spawnSync('tar', ['-tzf', file], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map((p) => p.replace(/^package\//, ''))
}

try {
  const { abi, triple } = thisPlatform()
  const napi = join(dirname(createRequire(import.meta.url).resolve('@napi-rs/cli/package.json')), 'dist', 'cli.js')
  const binary = `${pkg.napi.binaryName}.${abi}.node`
  const platformDir = join(root, 'npm', abi)
  console.log(`# consumer test: toolhost ${pkg.version} on ${abi}, in ${work}`)

  // 1. The binary, into its platform package. `npm install` built it in a clone; it
  // is rebuilt when a Rust source is newer. (napi build is not simply run again: after
  // a clone's first build, the next one always recompiles the addon, about a minute,
  // because napi sets NAPI_FORCE_BUILD_<crate> only on the first.)
  const newestSource = newestMtime(['src', 'crates', 'Cargo.toml', 'Cargo.lock', 'build.rs'].map((p) => join(root, p)))
  if (existsSync(join(root, binary)) && statSync(join(root, binary)).mtimeMs > newestSource) {
    console.log(`    ${binary} is newer than every Rust source: not rebuilt`)
  } else {
    const built = mustRun(process.execPath, [napi, 'build', '--platform', '--release'], { inherit: true })
    console.log(`    napi build: ${secs(built.ms)}`)
  }
  if (!existsSync(join(root, 'wasm', 'toolhost_wasm_bg.wasm'))) mustRun(process.execPath, [join(root, 'scripts', 'build-wasm.mjs')], { inherit: true })
  const hadBinary = existsSync(join(platformDir, binary))
  const artifacts = join(work, 'artifacts')
  mkdirSync(join(artifacts, `bindings-${triple}`), { recursive: true })
  cpSync(join(root, binary), join(artifacts, `bindings-${triple}`, binary))
  // The release workflow runs `napi artifacts` with every target's binary downloaded;
  // here only this one was built, so a config naming only its target.
  const config = join(work, 'napi-this-platform.json')
  writeFileSync(config, JSON.stringify({ binaryName: pkg.napi.binaryName, targets: [triple] }))
  mustRun(process.execPath, [napi, 'artifacts', '--output-dir', artifacts, '--npm-dir', 'npm', '--config-path', config])
  check(`napi artifacts put ${binary} into npm/${abi}/`, existsSync(join(platformDir, binary)))

  // 2. The tarballs.
  const packs = join(work, 'packs')
  mkdirSync(packs)
  const packPlatform = mustRun('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packs], { cwd: platformDir })
  const packMain = mustRun('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packs])
  if (!hadBinary) rmSync(join(platformDir, binary))
  const platformTgz = join(packs, JSON.parse(packPlatform.stdout)[0].filename)
  const mainTgz = join(packs, JSON.parse(packMain.stdout)[0].filename)
  const mainFiles = listTarball(mainTgz)
  const platformFiles = listTarball(platformTgz)
  console.log(`    ${mainTgz}: ${mb(statSync(mainTgz).size)}, ${mainFiles.length} files`)
  console.log(`    ${platformTgz}: ${mb(statSync(platformTgz).size)}, ${platformFiles.length} files`)
  check(`the platform tarball holds ${binary}`, platformFiles.includes(binary), platformFiles.join(', '))
  const needed = ['package.json', 'LICENSE', 'index.js', 'index.d.ts', 'js/node.mjs', 'js/node.cjs', 'js/index.d.ts',
    'wasm/package.json', 'wasm/toolhost_wasm.js', 'wasm/toolhost_wasm_bg.wasm',
    'scripts/install.mjs', 'Cargo.toml', 'Cargo.lock', 'build.rs', 'src/lib.rs', 'crates/toolhost/Cargo.toml']
  check('the main tarball holds the JS API, the loader, the WebAssembly engine, the install script and the Rust source',
    needed.every((f) => mainFiles.includes(f)), `missing: ${needed.filter((f) => !mainFiles.includes(f)).join(', ')}`)
  const stray = mainFiles.filter((f) => f.endsWith('.node') || /^(target|npm|node_modules|__test__)\//.test(f))
  check('the main tarball holds no binary, target/, npm/ or tests', stray.length === 0, stray.slice(0, 5).join(', '))

  const noRust = withoutRust()

  // 3. and 4. Main + platform package, no Rust.
  const app = consumerProject('consumer')
  const install = run('npm', ['install', '--no-audit', '--no-fund', mainTgz, platformTgz], { cwd: app, env: noRust })
  process.stdout.write(install.out.replace(/^(?=.)/gm, '    '))
  if (check('npm install of the main and platform tarballs, with no Rust on the machine', install.code === 0, `exit code ${install.code}`)) {
    console.log(`    install time: ${secs(install.ms)}`)
    installedSizes(app, 'prebuilt')
    check('no addon was built in node_modules/toolhost', !readdirSync(join(app, 'node_modules', 'toolhost')).some((f) => f.endsWith('.node')))
    runFirstExamples(app, noRust, 'prebuilt')
  }

  // 5. Main package alone, no Rust: installs, and runs on the WebAssembly fallback.
  const bare = consumerProject('consumer-no-binary')
  const alone = run('npm', ['install', '--no-audit', '--no-fund', mainTgz], { cwd: bare, env: noRust })
  process.stdout.write(alone.out.replace(/^(?=.)/gm, '    '))
  if (check('npm install of the main package alone (no platform package), with no Rust on the machine', alone.code === 0, `exit code ${alone.code}`)) {
    console.log(`    install time: ${secs(alone.ms)} (what a browser-only app, or a platform with no prebuilt binary, waits)`)
    installedSizes(bare, 'main package alone')
    check('no addon was built in node_modules/toolhost', !readdirSync(join(bare, 'node_modules', 'toolhost')).some((f) => f.endsWith('.node')))
    runFirstExamples(bare, noRust, 'main package alone', { fallback: true })
  }

  // 6. Building from source, asked for, with no Rust: a clear failure.
  const asked = consumerProject('consumer-from-source-no-rust')
  const refused = run('npm', ['install', '--no-audit', '--no-fund', mainTgz], { cwd: asked, env: { ...noRust, TOOLHOST_BUILD_FROM_SOURCE: '1' } })
  process.stdout.write(refused.out.replace(/^(?=.)/gm, '    '))
  check('with TOOLHOST_BUILD_FROM_SOURCE=1 and no Rust, npm install fails saying Rust is needed and how to get it',
    refused.code !== 0 && refused.out.includes('needs Rust') && refused.out.includes('https://rustup.rs'), `exit code ${refused.code}`)
  console.log(`    time to fail: ${secs(refused.ms)}`)

  // --from-source: main package alone, with Rust, TOOLHOST_BUILD_FROM_SOURCE=1: built from source.
  if (args.has('--from-source')) {
    const before = new Set(readdirSync(tmpdir()).filter((n) => n.startsWith('toolhost-build-')))
    const fromSource = consumerProject('consumer-from-source')
    const env = { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key))), TOOLHOST_BUILD_FROM_SOURCE: '1' }
    const built = run('npm', ['install', '--no-audit', '--no-fund', '--foreground-scripts', mainTgz], { cwd: fromSource, env })
    process.stdout.write(built.out.replace(/^(?=.)/gm, '    '))
    if (check('with TOOLHOST_BUILD_FROM_SOURCE=1, npm install builds the addon from source', built.code === 0, `exit code ${built.code}`)) {
      console.log(`    install time (building from source): ${secs(built.ms)}`)
      installedSizes(fromSource, 'from source')
      const left = readdirSync(tmpdir()).filter((n) => n.startsWith('toolhost-build-') && !before.has(n))
      check('the temporary build folder was removed', left.length === 0, left.join(', '))
      runFirstExamples(fromSource, process.env, 'from source')
    }
  }
} catch (error) {
  check('consumer test', false, error.message)
} finally {
  if (args.has('--keep')) console.log(`# kept ${work}`)
  else rmSync(work, { recursive: true, force: true })
}
console.log(`consumer-test: ${passed} passed, ${failed} failed`)
process.exit(failed ? 1 : 0)
