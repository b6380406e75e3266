// Reads what the platform test checks in a native addon, from the file's own headers,
// with no tool of the platform it was built for: ELF (Linux), Mach-O (macOS) and PE
// (Windows). Each reader returns
//   { format, arch, exports: [names], imports: [libraries], ... }
// plus, for ELF, the glibc symbol versions it needs (`glibc`: the highest, e.g. '2.17');
// for Mach-O, the minimum macOS (`minMacos`), how the N-API symbols are bound (dyld's bind
// opcodes or chained-fixup imports) and whether its ad-hoc code signature matches the
// file; for PE, the functions imported per DLL.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'

/** Reads the file at `path` and returns its description; throws for an unknown format. */
export function describeBinary(path) {
  const b = readFileSync(path)
  if (b.readUInt32BE(0) === 0x7f454c46) return elf(b)
  if (b.readUInt32LE(0) === 0xfeedfacf) return machO(b)
  if (b.readUInt16LE(0) === 0x5a4d) return pe(b)
  throw new Error(`${path}: neither ELF, 64-bit Mach-O nor PE (starts with ${b.subarray(0, 4).toString('hex')})`)
}

/** A NUL-terminated string at `at`. */
const cString = (b, at) => b.toString('latin1', at, b.indexOf(0, at))

/** Compares dotted versions: '2.17' < '2.28'. */
export function compareVersions(a, b) {
  const x = a.split('.').map(Number)
  const y = b.split('.').map(Number)
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0)
  return 0
}

// ---------------------------------------------------------------------------------
// ELF, 64-bit little-endian

const ELF_MACHINES = { 0x3e: 'x64', 0xb7: 'arm64' }

function elf(b) {
  if (b[4] !== 2 || b[5] !== 1) throw new Error('ELF: only 64-bit little-endian files are read')
  const shoff = Number(b.readBigUInt64LE(0x28))
  const shentsize = b.readUInt16LE(0x3a)
  const shnum = b.readUInt16LE(0x3c)
  const sections = []
  for (let i = 0; i < shnum; i++) {
    const at = shoff + i * shentsize
    sections.push({ type: b.readUInt32LE(at + 4), offset: Number(b.readBigUInt64LE(at + 0x18)), size: Number(b.readBigUInt64LE(at + 0x20)), link: b.readUInt32LE(at + 0x28) })
  }
  const ofType = (type) => sections.find((s) => s.type === type)
  const exports = []
  const dynsym = ofType(11) // SHT_DYNSYM
  if (dynsym !== undefined) {
    const strtab = sections[dynsym.link].offset
    for (let at = dynsym.offset; at < dynsym.offset + dynsym.size; at += 24) {
      const bind = b[at + 4] >> 4
      const defined = b.readUInt16LE(at + 6) !== 0
      if (defined && (bind === 1 || bind === 2)) exports.push(cString(b, strtab + b.readUInt32LE(at)))
    }
  }
  const imports = []
  const dynamic = ofType(6) // SHT_DYNAMIC
  if (dynamic !== undefined) {
    const strtab = sections[dynamic.link].offset
    for (let at = dynamic.offset; at < dynamic.offset + dynamic.size; at += 16) {
      const tag = b.readBigUInt64LE(at)
      if (tag === 0n) break
      if (tag === 1n) imports.push(cString(b, strtab + Number(b.readBigUInt64LE(at + 8)))) // DT_NEEDED
    }
  }
  // SHT_GNU_verneed: the symbol versions needed, per library (GLIBC_2.17, ...).
  const versions = []
  const verneed = ofType(0x6ffffffe)
  if (verneed !== undefined) {
    const strtab = sections[verneed.link].offset
    for (let at = verneed.offset; ; ) {
      const count = b.readUInt16LE(at + 2)
      for (let aux = at + b.readUInt32LE(at + 8), i = 0; i < count; i++) {
        versions.push(cString(b, strtab + b.readUInt32LE(aux + 8)))
        const next = b.readUInt32LE(aux + 12)
        if (next === 0) break
        aux += next
      }
      const next = b.readUInt32LE(at + 12)
      if (next === 0) break
      at += next
    }
  }
  const glibcVersions = versions.filter((v) => v.startsWith('GLIBC_')).map((v) => v.slice(6)).sort(compareVersions)
  return { format: 'ELF', arch: ELF_MACHINES[b.readUInt16LE(0x12)] ?? `machine 0x${b.readUInt16LE(0x12).toString(16)}`, exports, imports, glibc: glibcVersions.at(-1) ?? null }
}

// ---------------------------------------------------------------------------------
// Mach-O, 64-bit little-endian (thin)

const MACHO_CPUS = { 0x01000007: 'x64', 0x0100000c: 'arm64' }
const LC_SYMTAB = 0x2, LC_LOAD_DYLIB = 0xc, LC_CODE_SIGNATURE = 0x1d, LC_VERSION_MIN_MACOSX = 0x24, LC_DYLD_INFO = 0x22, LC_BUILD_VERSION = 0x32, LC_DYLD_CHAINED_FIXUPS = 0x34
/** The library "ordinal" of a symbol dyld looks up in every loaded image (flat namespace). */
const FLAT_LOOKUP = -2

/** Reads an unsigned LEB128 at `at`: [value, next offset]. */
function uleb(b, at) {
  let value = 0
  let shift = 0
  for (;;) {
    const byte = b[at++]
    value += (byte & 0x7f) * 2 ** shift
    shift += 7
    if ((byte & 0x80) === 0) return [value, at]
  }
}

/**
 * symbol name -> library ordinal, from dyld's bind and lazy-bind opcode streams
 * (LC_DYLD_INFO): -2 is a flat lookup, 1.. the LC_LOAD_DYLIB libraries in order.
 */
function bindOrdinals(b, streams) {
  const ordinals = new Map()
  for (const { offset, size } of streams) {
    let ordinal = 0
    let symbol = ''
    for (let at = offset; at < offset + size; ) {
      const byte = b[at++]
      const op = byte & 0xf0
      const imm = byte & 0x0f
      if (op === 0x10) ordinal = imm // SET_DYLIB_ORDINAL_IMM
      else if (op === 0x20) [ordinal, at] = uleb(b, at) // SET_DYLIB_ORDINAL_ULEB
      else if (op === 0x30) ordinal = imm === 0 ? 0 : imm - 16 // SET_DYLIB_SPECIAL_IMM: 0, -1, -2, -3
      else if (op === 0x40) {
        symbol = cString(b, at) // SET_SYMBOL_TRAILING_FLAGS_IMM
        at += Buffer.byteLength(symbol, 'latin1') + 1
      } else if (op === 0x60 || op === 0x70 || op === 0x80 || op === 0xa0) [, at] = uleb(b, at) // addend, segment+offset, add addr, bind+add
      else if (op === 0xc0) [, at] = uleb(b, uleb(b, at)[1]) // bind times, skipping
      else if (op === 0xd0) return ordinals // threaded binds: not read
      if (op === 0x90 || op === 0xa0 || op === 0xb0 || op === 0xc0) ordinals.set(symbol, ordinal)
    }
  }
  return ordinals
}

/** symbol name -> library ordinal, from the imports of LC_DYLD_CHAINED_FIXUPS. */
function chainedImportOrdinals(b, offset) {
  const ordinals = new Map()
  const importsOffset = offset + b.readUInt32LE(offset + 8)
  const symbolsOffset = offset + b.readUInt32LE(offset + 12)
  const count = b.readUInt32LE(offset + 16)
  const format = b.readUInt32LE(offset + 20)
  const width = { 1: 4, 2: 8, 3: 16 }[format]
  for (let i = 0; i < count; i++) {
    const at = importsOffset + i * width
    let ordinal
    let name
    if (format === 3) {
      ordinal = b.readUInt16LE(at)
      name = b.readUInt32LE(at + 4)
      if (ordinal >= 0xfff0) ordinal -= 0x10000
    } else {
      const word = b.readUInt32LE(at)
      ordinal = word & 0xff
      name = word >>> 9
      if (ordinal >= 0xf0) ordinal -= 0x100
    }
    ordinals.set(cString(b, symbolsOffset + name), ordinal)
  }
  return ordinals
}

const machOVersion = (v) => `${v >>> 16}.${(v >> 8) & 0xff}${v & 0xff ? `.${v & 0xff}` : ''}`

function machO(b) {
  const ncmds = b.readUInt32LE(16)
  let minMacos = null
  let symtab
  let signature
  let ordinals = new Map()
  const imports = []
  for (let at = 32, i = 0; i < ncmds; i++) {
    const cmd = b.readUInt32LE(at) & 0x7fffffff // LC_REQ_DYLD is the top bit
    const size = b.readUInt32LE(at + 4)
    if (cmd === LC_BUILD_VERSION) minMacos = machOVersion(b.readUInt32LE(at + 12))
    else if (cmd === LC_VERSION_MIN_MACOSX) minMacos ??= machOVersion(b.readUInt32LE(at + 8))
    else if (cmd === LC_SYMTAB) symtab = { symoff: b.readUInt32LE(at + 8), nsyms: b.readUInt32LE(at + 12), stroff: b.readUInt32LE(at + 16) }
    else if (cmd === LC_LOAD_DYLIB) imports.push(cString(b, at + b.readUInt32LE(at + 8)))
    else if (cmd === LC_CODE_SIGNATURE) signature = { offset: b.readUInt32LE(at + 8), size: b.readUInt32LE(at + 12) }
    else if (cmd === LC_DYLD_INFO) {
      // bind, weak bind and lazy bind: offset and size at 16, 24 and 32 of the command
      ordinals = bindOrdinals(b, [16, 24, 32].map((o) => ({ offset: b.readUInt32LE(at + o), size: b.readUInt32LE(at + o + 4) })))
    }
    else if (cmd === LC_DYLD_CHAINED_FIXUPS) ordinals = chainedImportOrdinals(b, b.readUInt32LE(at + 8))
    at += size
  }
  const exports = []
  /** Undefined N-API symbols, with whether each is looked up in any image (flat). */
  const napiImports = []
  if (symtab !== undefined) {
    for (let i = 0; i < symtab.nsyms; i++) {
      const at = symtab.symoff + i * 16
      const type = b[at + 4]
      if ((type & 0xe0) !== 0 || (type & 0x01) === 0) continue // stabs; not external
      const name = cString(b, symtab.stroff + b.readUInt32LE(at))
      if ((type & 0x0e) === 0x0e) exports.push(name.replace(/^_/, '')) // N_SECT
      else if ((type & 0x0e) === 0 && name.startsWith('_napi_')) {
        napiImports.push({ name: name.slice(1), flat: ordinals.get(name) === FLAT_LOOKUP })
      }
    }
  }
  return {
    format: 'Mach-O',
    arch: MACHO_CPUS[b.readUInt32LE(4)] ?? `cpu 0x${b.readUInt32LE(4).toString(16)}`,
    exports,
    imports,
    minMacos,
    napiImports,
    signature: signature === undefined ? null : codeSignature(b, signature),
  }
}

/**
 * Checks the code directory of an embedded signature against the file: every page hash
 * must match. Returns `{ valid, pages, adhoc, reason? }`. (Apple Silicon refuses to load
 * arm64 code whose signature does not match, ad-hoc or not.)
 */
function codeSignature(b, { offset }) {
  if (b.readUInt32BE(offset) !== 0xfade0cc0) return { valid: false, reason: 'no embedded signature superblob' }
  const count = b.readUInt32BE(offset + 8)
  for (let i = 0; i < count; i++) {
    const type = b.readUInt32BE(offset + 12 + i * 8)
    if (type !== 0) continue // the code directory slot
    const cd = offset + b.readUInt32BE(offset + 16 + i * 8)
    if (b.readUInt32BE(cd) !== 0xfade0c02) return { valid: false, reason: 'bad code directory magic' }
    const flags = b.readUInt32BE(cd + 12)
    const hashOffset = b.readUInt32BE(cd + 16)
    const nCodeSlots = b.readUInt32BE(cd + 28)
    const codeLimit = b.readUInt32BE(cd + 32)
    const hashSize = b[cd + 36]
    const hashType = b[cd + 37]
    const pageSize = 2 ** b[cd + 39]
    const algorithm = { 1: 'sha1', 2: 'sha256' }[hashType]
    if (algorithm === undefined) return { valid: false, reason: `hash type ${hashType}` }
    for (let slot = 0; slot < nCodeSlots; slot++) {
      const page = b.subarray(slot * pageSize, Math.min((slot + 1) * pageSize, codeLimit))
      const expected = b.subarray(cd + hashOffset + slot * hashSize, cd + hashOffset + (slot + 1) * hashSize)
      const actual = createHash(algorithm).update(page).digest().subarray(0, hashSize)
      if (!actual.equals(expected)) return { valid: false, reason: `page ${slot} does not match its hash` }
    }
    return { valid: true, pages: nCodeSlots, adhoc: (flags & 0x2) !== 0 }
  }
  return { valid: false, reason: 'no code directory' }
}

// ---------------------------------------------------------------------------------
// PE32+ (64-bit Windows)

const PE_MACHINES = { 0x8664: 'x64', 0xaa64: 'arm64' }

function pe(b) {
  const header = b.readUInt32LE(0x3c)
  if (b.readUInt32LE(header) !== 0x4550) throw new Error('PE: no PE signature')
  const coff = header + 4
  const machine = b.readUInt16LE(coff)
  const nsections = b.readUInt16LE(coff + 2)
  const optionalSize = b.readUInt16LE(coff + 16)
  const dll = (b.readUInt16LE(coff + 18) & 0x2000) !== 0
  const optional = coff + 20
  if (b.readUInt16LE(optional) !== 0x20b) throw new Error('PE: only PE32+ (64-bit) files are read')
  const directory = (i) => ({ rva: b.readUInt32LE(optional + 112 + i * 8), size: b.readUInt32LE(optional + 116 + i * 8) })
  const sections = []
  for (let i = 0, at = optional + optionalSize; i < nsections; i++, at += 40) {
    sections.push({ va: b.readUInt32LE(at + 12), vsize: b.readUInt32LE(at + 8), raw: b.readUInt32LE(at + 20) })
  }
  const offset = (rva) => {
    const s = sections.find((s) => rva >= s.va && rva < s.va + s.vsize)
    if (s === undefined) throw new Error(`PE: RVA 0x${rva.toString(16)} is in no section`)
    return rva - s.va + s.raw
  }
  const exports = []
  const exportDir = directory(0)
  if (exportDir.rva !== 0) {
    const at = offset(exportDir.rva)
    const names = b.readUInt32LE(at + 24)
    const table = offset(b.readUInt32LE(at + 32))
    for (let i = 0; i < names; i++) exports.push(cString(b, offset(b.readUInt32LE(table + i * 4))))
  }
  const imports = []
  const functions = {}
  const importDir = directory(1)
  if (importDir.rva !== 0) {
    for (let at = offset(importDir.rva); b.readUInt32LE(at + 12) !== 0; at += 20) {
      const name = cString(b, offset(b.readUInt32LE(at + 12)))
      imports.push(name)
      const thunks = b.readUInt32LE(at) || b.readUInt32LE(at + 16)
      const names = (functions[name.toLowerCase()] = [])
      for (let t = offset(thunks); ; t += 8) {
        const entry = b.readBigUInt64LE(t)
        if (entry === 0n) break
        names.push(entry >> 63n ? `#${entry & 0xffffn}` : cString(b, offset(Number(entry & 0x7fffffffn)) + 2))
      }
    }
  }
  return { format: 'PE', arch: PE_MACHINES[machine] ?? `machine 0x${machine.toString(16)}`, dll, exports, imports, functions }
}
