// `auditLog` (a file) written from JS, for the engine's WebAssembly build in Node,
// which has no file system of its own. It keeps the promises of the native writer
// (crates/toolhost/src/audit.rs), record for record:
// - each record is one line, written with one write(2) on a file opened for appending
//   (nothing is buffered in the process), before execute() resolves: it survives the
//   process being killed; with `auditSync: 'fsync'` it is also fdatasync'ed;
// - a file that cannot be opened is reported with the record, and tried again with the
//   next one, as the native one does;
// - outside Windows, each append checks that the open file still has a name (one fstat),
//   and at most once a second that the path still names it (one stat): a file deleted,
//   or moved away by log rotation, is created again at the path; when that fails (its
//   directory was deleted) the record is reported, and written again once it can be.
import { closeSync, fdatasyncSync, fstatSync, openSync, statSync, writeSync } from 'node:fs'

/** How often the path is checked to still name the open file (log rotation). */
const PATH_CHECK_MS = 1000
const CHECKS_NAMES = process.platform !== 'win32'

/** Open files of audit files nobody can reach any more are closed. */
const closer = new FinalizationRegistry((open) => {
  try {
    closeSync(open.fd)
  } catch {}
})

export class AuditFile {
  #path
  #fsync
  /** `{ fd, dev, ino }` of the open file; the registry closes it once this is collected. */
  #open = null
  #pathChecked = 0

  /** @param path the `auditLog` option; @param sync the `auditSync` option (checked by the engine). */
  constructor(path, sync) {
    this.#path = path
    this.#fsync = sync === 'fsync'
    try {
      this.#reopen()
    } catch {
      // Reported with the first record, and tried again then.
    }
  }

  /** Appends `line` (a record's JSON, no newline) and a newline; returns why it could
   * not, as the native writer words it, or undefined. */
  append(line) {
    if (this.#open === null) {
      try {
        this.#reopen()
      } catch (e) {
        return `audit log ${this.#path} could not be opened: ${e.message}`
      }
    }
    try {
      if (!this.#stillAtPath()) {
        try {
          this.#reopen()
        } catch (e) {
          throw new Error(`the file was deleted or moved after it was opened, and creating it again failed: ${e.message}`)
        }
      }
      const fd = this.#open.fd
      const bytes = Buffer.from(`${line}\n`)
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at)
      if (this.#fsync) fdatasyncSync(fd)
      return undefined
    } catch (e) {
      return `audit log ${this.#path} could not be written: ${e.message}`
    }
  }

  /** Opens the path for appending (creating the file), in place of the file open now. */
  #reopen() {
    const fd = openSync(this.#path, 'a')
    let id
    try {
      id = fstatSync(fd, { bigint: true })
    } catch (e) {
      closeSync(fd)
      throw e
    }
    const old = this.#open
    this.#open = { fd, dev: id.dev, ino: id.ino }
    closer.register(this, this.#open, this.#open)
    this.#pathChecked = Date.now()
    if (old !== null) {
      closer.unregister(old)
      try {
        closeSync(old.fd)
      } catch {}
    }
  }

  /** Whether the open file is still reachable at the path: it has a name (always checked),
   * and the path names it (checked when last checked over a second ago). */
  #stillAtPath() {
    if (!CHECKS_NAMES) return true
    const open = this.#open
    let nlink = 1
    try {
      nlink = fstatSync(open.fd).nlink
    } catch {}
    if (nlink === 0) return false
    const now = Date.now()
    if (now - this.#pathChecked < PATH_CHECK_MS) return true
    this.#pathChecked = now
    try {
      const st = statSync(this.#path, { bigint: true })
      return st.dev === open.dev && st.ino === open.ino
    } catch {
      return false
    }
  }
}
