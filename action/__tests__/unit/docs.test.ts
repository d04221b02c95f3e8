import { describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const read = (path: string) => readFileSync(root + path, 'utf8')
const action = parse(read('action.yml'))
const readme = read('README.md')
const docs = read('docs/action.md')
/** The text of docs/action.md's section `## TITLE`, up to the next `## ` heading. */
const section = (title: string) => {
  const start = docs.indexOf(`\n## ${title}\n`)
  expect(start, `docs/action.md has a section "${title}"`).toBeGreaterThanOrEqual(0)
  const end = docs.indexOf('\n## ', start + 1)
  return docs.slice(start, end < 0 ? undefined : end)
}

describe('action.yml, its docs and the code agree', () => {
  it('runs the committed bundle on node24', () => {
    expect(action.runs).toEqual({ using: 'node24', main: 'action/dist/index.js' })
  })

  it('the README links to the inputs and outputs, one link away', () => {
    expect(readme).toContain('](docs/action.md#inputs)')
  })

  it('every input is described in action.yml, documented in docs/action.md, and read by inputs.ts', () => {
    const source = read('action/src/inputs.ts')
    const inputs = section('Inputs')
    for (const [name, def] of Object.entries<{ description?: string }>(action.inputs)) {
      expect(def.description, name).toBeTruthy()
      expect(inputs, `docs/action.md documents input ${name}`).toContain(`| \`${name}\` |`)
      expect(source, `inputs.ts reads ${name}`).toContain(`get('${name}')`)
    }
    const read_ = [...source.matchAll(/get\('([a-z-]+)'\)/g)].map((m) => m[1])
    expect(new Set(read_)).toEqual(new Set(Object.keys(action.inputs)))
  })

  it('every output set by summary.ts is declared in action.yml and documented in docs/action.md', () => {
    const outputs = section('Outputs')
    const set = [...read('action/src/summary.ts').matchAll(/core\.setOutput\('([a-z0-9-]+)'/g)].map((m) => m[1])
    expect(new Set(set)).toEqual(new Set(Object.keys(action.outputs)))
    for (const name of set) expect(outputs, `docs/action.md documents output ${name}`).toContain(`\`${name}\``)
  })
})
