/**
 * The action's Markdown escaper (summary.ts `escapeMarkdown`) on the shared corpus of hostile
 * inputs, templates/markdown-escape-corpus.json, with the expected outputs the engine's
 * escape_markdown is tested on too.
 */
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { codeSpan, escapeMarkdown } from '../../src/summary.js'

interface Case {
  why: string
  input: string
  output: string
}

const here = dirname(fileURLToPath(import.meta.url))
const corpus = JSON.parse(readFileSync(join(here, '..', '..', '..', 'templates', 'markdown-escape-corpus.json'), 'utf8')) as {
  cases: Case[]
}

describe('escapeMarkdown', () => {
  it('reads a corpus of hostile inputs', () => {
    expect(corpus.cases.length).toBeGreaterThanOrEqual(10)
  })
  it.each(corpus.cases.map((c) => [c.why, c] as const))('%s', (_why, c) => {
    expect(escapeMarkdown(c.input)).toBe(c.output)
  })
})

describe('codeSpan', () => {
  it('shows the text as it is, fenced past its backticks, hidden characters written out', () => {
    expect(codeSpan('perf_api @team #1')).toBe('`perf_api @team #1`')
    expect(codeSpan('a`b``c')).toBe('```a`b``c```')
    expect(codeSpan('`x')).toBe('`` `x ``')
    expect(codeSpan('x\u202e\ny')).toBe('`x\\u{202e} y`')
  })
})
