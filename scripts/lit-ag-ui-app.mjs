// examples/lit-ag-ui, made ready to serve: the browser build of the engine (wasm/) and
// the example's own node_modules, with toolhost installed as a copy of this checkout
// (installed again when js/, wasm/ or package.json changed). Used by
// `npm run example:ag-ui` (scripts/example-ag-ui.mjs) and its test
// (scripts/lit-ag-ui-test.mjs).
import { spawn } from 'node:child_process'
import { existsSync, lstatSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const EXAMPLE = join(ROOT, 'examples', 'lit-ag-ui')

function run(command, args, cwd) {
  console.log(`# $ ${[command, ...args].join(' ')}   (in ${cwd})`)
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] })
    child.on('error', reject)
    child.on('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit code ${code}`})`))))
  })
}

/** Files of this checkout the installed copy lacks or holds in another version. */
function staleFiles(installed) {
  const stale = []
  const differs = (path) => !existsSync(join(installed, path)) || !readFileSync(join(ROOT, path)).equals(readFileSync(join(installed, path)))
  for (const dir of ['js', 'wasm']) {
    for (const name of readdirSync(join(ROOT, dir))) {
      if (statSync(join(ROOT, dir, name)).isFile() && differs(`${dir}/${name}`)) stale.push(`${dir}/${name}`)
    }
  }
  if (differs('package.json')) stale.push('package.json')
  return stale
}

/** Builds wasm/ when it is missing, and installs the example when it is not, or is stale. */
export async function prepareExample() {
  if (!existsSync(join(ROOT, 'wasm', 'toolhost_wasm_bg.wasm')) || !existsSync(join(ROOT, 'wasm', 'toolhost_wasm.js'))) {
    console.log('# wasm/ is not built: building the browser engine (npm run build:wasm)')
    await run(process.execPath, [join(ROOT, 'scripts', 'build-wasm.mjs')], ROOT)
  }
  const modules = join(EXAMPLE, 'node_modules')
  const installed = join(modules, 'toolhost')
  if (['vite', 'lit', '@ag-ui/client', '@ag-ui/encoder', 'toolhost'].every((name) => existsSync(join(modules, name)))) {
    const stale = lstatSync(installed).isSymbolicLink() ? ['(a symlink, not a copy)'] : staleFiles(installed)
    if (stale.length === 0) return
    console.log(`# ${installed} differs from the checkout (${stale.slice(0, 4).join(', ')}${stale.length > 4 ? ', ...' : ''}): installing it again`)
    rmSync(installed, { recursive: true, force: true })
    // Vite keeps its pre-bundled copy of toolhost until the lockfile or config changes
    // (the example has no lockfile): it is dropped with the old copy.
    rmSync(join(modules, '.vite'), { recursive: true, force: true })
  }
  // --ignore-scripts (also in the example's .npmrc): toolhost's install script builds
  // the Node addon, which a page never loads.
  await run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund'], EXAMPLE)
  const still = staleFiles(installed)
  if (still.length > 0) throw new Error(`after npm install, ${installed} still differs from the checkout: ${still.join(', ')}`)
}

/** The example's Vite binary. */
export const viteBin = () => join(EXAMPLE, 'node_modules', 'vite', 'bin', 'vite.js')
