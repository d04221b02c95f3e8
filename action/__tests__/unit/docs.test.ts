import { describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const read = (path: string) => readFileSync(root + path, 'utf8')
const action = parse(read('action.yml'))
const readme = read('README.md')

describe('action.yml, the README and the code agree', () => {
  it('runs the committed bundle on node24', () => {
    expect(action.runs).toEqual({ using: 'node24', main: 'action/dist/index.js' })
  })

  it('every input is described in action.yml, documented in the README, and read by inputs.ts', () => {
    const source = read('action/src/inputs.ts')
    for (const [name, def] of Object.entries<{ description?: string }>(action.inputs)) {
      expect(def.description, name).toBeTruthy()
      expect(readme, `README documents input ${name}`).toContain(`| \`${name}\` |`)
      expect(source, `inputs.ts reads ${name}`).toContain(`get('${name}')`)
    }
    const read_ = [...source.matchAll(/get\('([a-z-]+)'\)/g)].map((m) => m[1])
    expect(new Set(read_)).toEqual(new Set(Object.keys(action.inputs)))
  })

  it('every output set by summary.ts is declared in action.yml and documented in the README', () => {
    const set = [...read('action/src/summary.ts').matchAll(/core\.setOutput\('([a-z0-9-]+)'/g)].map((m) => m[1])
    expect(new Set(set)).toEqual(new Set(Object.keys(action.outputs)))
    for (const name of set) expect(readme, `README documents output ${name}`).toContain(`\`${name}\``)
  })
})
