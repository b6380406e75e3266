// The Python `mcp` package for the tests that use it as a second, independent MCP
// client: installed from PyPI into a venv under target/ the first time (a pinned
// version, so every machine tests the same client), reused afterwards.
//
//   node scripts/mcp-fixtures/python.mjs      installs it (CI can run this as a setup
//                                             step) and prints the venv's python
//
// TOOLHOST_PYTHON=/path/to/python uses that interpreter as it is (it must import mcp).
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const PYTHON_MCP_VERSION = '1.30.0'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const VENV = join(ROOT, 'target', 'mcp-python', `venv-mcp-${PYTHON_MCP_VERSION}`)
const VENV_PYTHON = join(VENV, process.platform === 'win32' ? 'Scripts/python.exe' : 'bin/python')

function run(command, args, timeoutMs) {
  return new Promise((resolve) => {
    let out = ''
    let child
    try {
      child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    } catch (err) {
      return resolve({ code: -1, out: String(err) })
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    child.on('error', (err) => {
      clearTimeout(timer)
      resolve({ code: -1, out: out + String(err) })
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, out })
    })
  })
}

const probe = (python) => run(python, ['-c', 'import importlib.metadata as m, mcp; print(m.version("mcp"))'], 30_000)

/**
 * A python that imports `mcp` ==PYTHON_MCP_VERSION: `{ python }`, or `{ missing }` (why
 * not) when there is no python3 at all. Throws when the install fails.
 */
export async function pythonWithMcp() {
  if (process.env.TOOLHOST_PYTHON) return { python: process.env.TOOLHOST_PYTHON }
  if (existsSync(VENV_PYTHON)) {
    const have = await probe(VENV_PYTHON)
    if (have.code === 0 && have.out.trim() === PYTHON_MCP_VERSION) return { python: VENV_PYTHON }
  }
  const version = await run('python3', ['-c', 'import sys; print(sys.version_info >= (3, 10))'], 30_000)
  if (version.code !== 0) return { missing: 'python3 is not installed' }
  if (version.out.trim() !== 'True') return { missing: 'the mcp package needs Python 3.10 or later' }
  const venv = await run('python3', ['-m', 'venv', '--clear', VENV], 120_000)
  if (venv.code !== 0) throw new Error(`python3 -m venv ${VENV} failed:\n${venv.out}`)
  const pip = await run(VENV_PYTHON, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `mcp==${PYTHON_MCP_VERSION}`], 300_000)
  if (pip.code !== 0) throw new Error(`pip install mcp==${PYTHON_MCP_VERSION} failed:\n${pip.out}`)
  const have = await probe(VENV_PYTHON)
  if (have.code !== 0) throw new Error(`mcp does not import after installing it:\n${have.out}`)
  return { python: VENV_PYTHON }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const found = await pythonWithMcp()
  if (found.missing) {
    console.error(found.missing)
    process.exit(1)
  }
  console.log(found.python)
}
