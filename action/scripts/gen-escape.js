// Generates src/generated/markdown-escape.ts, the action's copy of the Markdown escaping rules,
// from templates/markdown-escape.json (which the engine embeds: one definition for both).
// `--check` writes nothing and fails when the committed file is not what the rules generate.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const rulesFile = join(here, '..', '..', 'templates', 'markdown-escape.json')
const outFile = join(here, '..', 'src', 'generated', 'markdown-escape.ts')

/** JSON text with every character beyond ASCII written as `\\uXXXX` (no invisible ones). */
function ascii(text) {
  return text.replace(/[^\x20-\x7e\n]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

const { $comment, ...rules } = JSON.parse(readFileSync(rulesFile, 'utf8'))
const ts =
  '// Generated from templates/markdown-escape.json by `npm run gen-types` (scripts/gen-escape.js).\n' +
  '// Do not edit: change the JSON, then run `npm run gen-types`.\n\n' +
  `/** ${$comment.replace(/\*\//g, '*\\/')} */\n` +
  `export const MARKDOWN_ESCAPE = ${ascii(JSON.stringify(rules, null, 2))} as const\n`

if (process.argv.includes('--check')) {
  let committed = ''
  try {
    committed = readFileSync(outFile, 'utf8')
  } catch {
    // reported below as stale
  }
  if (committed !== ts) {
    console.error('src/generated/markdown-escape.ts is stale: it is not what templates/markdown-escape.json generates.\nRun `npm run gen-types` in action/ and commit it.')
    process.exitCode = 1
  } else {
    console.log('src/generated/markdown-escape.ts is up to date with templates/markdown-escape.json')
  }
} else {
  mkdirSync(dirname(outFile), { recursive: true })
  writeFileSync(outFile, ts)
  console.log(`wrote ${outFile}`)
}
