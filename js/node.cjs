// `require('toolhost')`: the same module as `import` (Node >= 20.19 loads ES modules
// from require()).
module.exports = require('./node.mjs')
