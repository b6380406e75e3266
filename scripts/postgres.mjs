// A real Postgres server for the journal's tests and benchmark: Debian's `postgresql`
// (initdb + pg_ctl), a cluster in a temporary folder, on a free loopback port, stopped
// (and removed) at the end. Postgres refuses to run as root, so as root the cluster
// belongs to, and runs as, the `postgres` user.
//
//   import { startPostgres } from '../scripts/postgres.mjs'
//   const pg = await startPostgres()      // { url, database(name), stop() }
//
//   node scripts/postgres.mjs --install   installs Debian's postgresql when it is missing
//                                         (npm test runs it first)
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = '/usr/lib/postgresql'

/** The newest installed Postgres's bin folder, or undefined. */
export function postgresBin() {
  if (!existsSync(ROOT)) return undefined
  const versions = readdirSync(ROOT).filter((v) => /^\d+$/.test(v) && existsSync(join(ROOT, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a))
  return versions.length > 0 ? join(ROOT, versions[0], 'bin') : undefined
}

/** Installs Debian's postgresql with apt-get when it is missing (needs root, as CI has). */
export function ensurePostgres() {
  if (postgresBin() !== undefined) return postgresBin()
  if (process.platform !== 'linux') throw new Error('the journal tests need PostgreSQL (initdb, pg_ctl) under /usr/lib/postgresql')
  console.error('toolhost: installing Debian\'s postgresql for the journal tests (apt-get install -y postgresql)')
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  const sudo = process.getuid?.() === 0 ? [] : ['sudo']
  const run = (args) => {
    const r = spawnSync(sudo.length > 0 ? 'sudo' : args[0], sudo.length > 0 ? args : args.slice(1), { stdio: 'inherit', env })
    if (r.status !== 0) throw new Error(`${args.join(' ')} failed (exit ${r.status})`)
  }
  run(['apt-get', 'update'])
  run(['apt-get', 'install', '-y', '--no-install-recommends', 'postgresql'])
  const bin = postgresBin()
  if (bin === undefined) throw new Error('postgresql was installed but initdb is not under /usr/lib/postgresql')
  return bin
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

const asRoot = () => process.getuid?.() === 0

function run(bin, program, args) {
  const cmd = asRoot() ? 'runuser' : join(bin, program)
  const full = asRoot() ? ['-u', 'postgres', '--', join(bin, program), ...args] : args
  return execFileSync(cmd, full, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

const clusters = new Set()

function stopAll() {
  for (const c of clusters) c.stopSync()
}
process.once('exit', stopAll)

/**
 * Starts a cluster. `options.settings` are extra `-c name=value` server settings.
 * Resolves `{ url, port, dir, database(name), stop(), stopSync(), kill() }`.
 */
export async function startPostgres(options = {}) {
  const bin = ensurePostgres()
  const dir = mkdtempSync(join(tmpdir(), 'toolhost-pg-'))
  if (asRoot()) execFileSync('chown', ['-R', 'postgres:postgres', dir])
  const data = join(dir, 'data')
  run(bin, 'initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8'])
  const port = await freePort()
  const settings = ['-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300']
  for (const [name, value] of Object.entries(options.settings ?? {})) settings.push('-c', `${name}=${value}`)
  const start = () => {
    try {
      run(bin, 'pg_ctl', ['-D', data, '-o', settings.join(' '), '-l', join(dir, 'log'), '-w', 'start'])
    } catch (e) {
      // pg_ctl says only that it gave up: the server's log says why.
      let log = ''
      try {
        log = readFileSync(join(dir, 'log'), 'utf8').split('\n').slice(-20).join('\n')
      } catch {}
      e.message += `\nthe server's log ends:\n${log}`
      throw e
    }
  }
  try {
    start()
  } catch (e) {
    rmSync(dir, { recursive: true, force: true })
    throw e
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  let stopped = false
  const cluster = {
    url,
    port,
    dir,
    /** A database of its own, created afresh: its URL. */
    database(name) {
      run(bin, 'psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-q', '-c', `DROP DATABASE IF EXISTS ${name}`])
      run(bin, 'psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-q', '-c', `CREATE DATABASE ${name}`])
      return `postgres://postgres@127.0.0.1:${port}/${name}`
    },
    /** Runs SQL in a database. */
    sql(database, statement) {
      return run(bin, 'psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', database, '-At', '-c', statement]).trim()
    },
    /** Stops the server at once (as a crash would), keeping its data: `restart()` brings it back. */
    crash() {
      run(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'])
    },
    restart() {
      start()
    },
    stopSync() {
      if (stopped) return
      stopped = true
      clusters.delete(cluster)
      try {
        run(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'])
      } catch {}
      rmSync(dir, { recursive: true, force: true })
    },
    async stop() {
      cluster.stopSync()
    },
  }
  clusters.add(cluster)
  return cluster
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--install')) {
  console.log(`postgres: ${ensurePostgres()}`)
}
