// Generated from js/index.d.ts by scripts/esm-declarations.mjs: do not edit.
// `node scripts/esm-declarations.mjs` writes it again.

export * from './index.js'
