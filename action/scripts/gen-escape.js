// Generates src/generated/markdown-escape.ts, the action's copy of the Markdown escaping rules,
// from templates/markdown-escape.json (which the engine embeds: one definition for both).
// `--check` writes nothing and fails when the committed file is not what the rules generate.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeOrCheck } from './generated.js'

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

writeOrCheck(outFile, ts, 'templates/markdown-escape.json')
