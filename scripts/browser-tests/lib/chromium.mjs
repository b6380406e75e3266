// Finds Chromium, installing Debian's `chromium` package when it is missing (fresh CI
// machines). Browser downloads (npx playwright install, puppeteer's own Chrome) do
// not work on the closed network, the Debian mirror does.
import { existsSync } from 'node:fs'
import { spawnSync } from 'node:child_process'

export const DEFAULT_CHROMIUM = '/usr/bin/chromium'

function run(command, args) {
  console.log(`# $ ${[command, ...args].join(' ')}`)
  const result = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
  if (result.error) throw new Error(`could not run ${command}: ${result.error.message}`)
  return result.status === 0
}

/**
 * The path of a Chromium executable: $CHROMIUM_PATH when set (never installed), else
 * /usr/bin/chromium, installed with apt-get (as root, or through sudo) if absent.
 */
export function ensureChromium(expected = DEFAULT_CHROMIUM) {
  const fromEnv = process.env.CHROMIUM_PATH
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`CHROMIUM_PATH=${fromEnv} does not exist`)
    return fromEnv
  }
  if (existsSync(expected)) return expected

  console.log(`# Chromium is not installed at ${expected}; installing Debian's chromium package with apt-get`)
  const asRoot = process.getuid?.() === 0
  if (!asRoot) console.log('# not running as root: using sudo')
  const apt = (...args) => (asRoot ? run('apt-get', args) : run('sudo', ['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args]))
  // A fresh machine has no package lists yet, so update first.
  if (!apt('update')) throw new Error('apt-get update failed')
  if (!apt('install', '-y', 'chromium')) throw new Error('apt-get install -y chromium failed')
  if (!existsSync(expected)) throw new Error(`apt-get installed chromium, but ${expected} is still missing`)
  console.log(`# installed ${expected}`)
  return expected
}
