// Generates src/generated/verdict.ts, the TypeScript types of the engine's verdict document,
// from schema/verdict.schema.json (which the engine writes: `loadgate schema verdict`), with
// json-schema-to-typescript. `--check` writes nothing and fails when the committed file is not
// what the schema generates (as check-dist does for dist/).
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeOrCheck } from './generated.js'
import { compile } from 'json-schema-to-typescript'

const here = dirname(fileURLToPath(import.meta.url))
const schemaFile = join(here, '..', '..', 'schema', 'verdict.schema.json')
const outFile = join(here, '..', 'src', 'generated', 'verdict.ts')

const schema = refsWithoutSiblings(JSON.parse(readFileSync(schemaFile, 'utf8')))
const ts = await compile(schema, 'VerdictDocument', {
  bannerComment:
    '// Generated from schema/verdict.schema.json by `npm run gen-types` (json-schema-to-typescript).\n' +
    '// Do not edit: regenerate the schema with `loadgate schema verdict`, then run `npm run gen-types`.',
  // The engine writes exactly these fields: no index signatures for unknown ones.
  additionalProperties: false,
  style: { semi: false, singleQuote: true, printWidth: 120, trailingComma: 'none', bracketSpacing: true }
})

/**
 * schemars writes a property's doc comment next to its `$ref` (`{"$ref": "#/$defs/RunInfo",
 * "description": "The current run."}`); json-schema-to-typescript then copies the definition
 * into a second type (`RunInfo1`). `{"description": ..., "allOf": [{"$ref": ...}]}` says the same
 * and keeps one named type per definition.
 */
function refsWithoutSiblings(node) {
  if (Array.isArray(node)) return node.map(refsWithoutSiblings)
  if (node === null || typeof node !== 'object') return node
  const out = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, refsWithoutSiblings(v)]))
  if (typeof out.$ref === 'string' && Object.keys(out).length > 1) {
    const { $ref, ...siblings } = out
    return { ...siblings, allOf: [{ $ref }] }
  }
  return out
}

writeOrCheck(outFile, ts, 'schema/verdict.schema.json')
