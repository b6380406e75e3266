// `npm run build:platforms [-- <platform>...]`: builds the native addon of every platform
// package on this machine (a Linux x64 or arm64 host), one at a time, and puts each into
// its package, npm/<platform>/toolhost.<platform>.node, the layout napi-rs publishes
// (`napi prepublish` writes the main package's optionalDependencies at publish). How each
// is built, and why: scripts/platforms/targets.mjs. What is missing is installed first
// (scripts/platforms/toolchain.mjs). Cargo builds under target/<triple>/; each napi build
// writes to target/platforms/<platform>/, so the generated index.js and index.d.ts of the
// repository are left as they are.
//
// The first full run takes 20-40 minutes on a busy 2-core machine (each target is a
// release build with LTO); a second, with nothing changed, a few seconds per target.
import { copyFileSync, existsSync, mkdirSync, renameSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { PLATFORMS, binaryFile } from './platforms/targets.mjs'
import { ensureAptPackages, ensureRustTargets, libnodeStub, root, run, zigEnv } from './platforms/toolchain.mjs'

const napi = join(root, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js')

/** Builds `p` (an entry of PLATFORMS) into npm/<platform>/; returns the file's path. */
export function buildPlatform(p) {
  const started = performance.now()
  const cargoTriple = p.build.split('.')[0]
  ensureRustTargets([cargoTriple])
  const outDir = join(root, 'target', 'platforms', p.platform)
  mkdirSync(outDir, { recursive: true })
  const args = [napi, 'build', '--platform', '--release', '--target', p.build, '--output-dir', outDir, '--no-js', '--dts', 'index.d.ts']
  let env
  if (p.mingw) {
    ensureAptPackages(['mingw-w64'], 'the Windows addon is linked with mingw')
    args.push('--features', 'napi/dyn-symbols')
    env = { ...process.env, LIBNODE_PATH: libnodeStub(), CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER: 'x86_64-w64-mingw32-gcc' }
  } else {
    args.push('--cross-compile')
    env = zigEnv()
    if (p.macos !== undefined) env.MACOSX_DEPLOYMENT_TARGET = p.macos
  }
  run(process.execPath, args, { env })
  // napi names the file after the target it built: the mingw build is win32-x64-gnu.
  const built = join(outDir, binaryFile(p.mingw ? { platform: 'win32-x64-gnu' } : p))
  const shipped = join(outDir, binaryFile(p))
  if (built !== shipped) renameSync(built, shipped)
  const dest = join(root, 'npm', p.platform, binaryFile(p))
  copyFileSync(shipped, dest)
  console.log(`# ${p.platform}: npm/${p.platform}/${binaryFile(p)}, ${(statSync(dest).size / 1024 / 1024).toFixed(1)} MB, built in ${Math.round((performance.now() - started) / 1000)} s`)
  return dest
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const wanted = process.argv.slice(2)
  const unknown = wanted.filter((w) => !PLATFORMS.some((p) => p.platform === w))
  if (unknown.length > 0) {
    console.error(`unknown platform ${unknown.join(', ')}; the platforms are ${PLATFORMS.map((p) => p.platform).join(', ')}`)
    process.exit(2)
  }
  if (process.platform !== 'linux' || !['x64', 'arm64'].includes(process.arch)) {
    console.error(`build:platforms cross-builds from Linux x64 or arm64 (zig, mingw); this is ${process.platform}-${process.arch}`)
    process.exit(2)
  }
  const started = performance.now()
  for (const p of PLATFORMS.filter((p) => wanted.length === 0 || wanted.includes(p.platform))) buildPlatform(p)
  console.log(`# build:platforms: done in ${Math.round((performance.now() - started) / 1000)} s`)
  if (!existsSync(join(root, 'wasm', 'toolhost_wasm_bg.wasm'))) console.log('# note: wasm/ (the fallback and browser engine) is built by npm run build:wasm')
}
