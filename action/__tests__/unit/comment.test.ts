import { describe, expect, it } from 'vitest'
import { COMMENT_LIMIT, commentBody, isOurs, marker, truncate } from '../../src/comment.js'

const mark = marker('perf.yml/gate/loadgate')

describe('marker', () => {
  it('is an HTML comment that cannot be closed early by its key', () => {
    expect(mark).toBe('<!-- loadgate-comment: perf.yml/gate/loadgate -->')
    const m = marker('a-->b')
    expect(m.indexOf('-->')).toBe(m.length - 3)
  })
})

describe('isOurs', () => {
  const bot = { login: 'github-actions[bot]', type: 'Bot' }
  it('needs the marker at the very start and a bot author', () => {
    expect(isOurs({ id: 1, body: `${mark}\nreport`, user: bot }, mark)).toBe(true)
    expect(isOurs({ id: 1, body: `> ${mark}\nquoted`, user: bot }, mark)).toBe(false)
    expect(isOurs({ id: 1, body: `${marker('other')}\nreport`, user: bot }, mark)).toBe(false)
    expect(isOurs({ id: 1, body: null, user: bot }, mark)).toBe(false)
  })

  it('takes a user-authored comment only when the token is that user', () => {
    const c = { id: 1, body: `${mark}\nreport`, user: { login: 'alice', type: 'User' } }
    expect(isOurs(c, mark)).toBe(false)
    expect(isOurs(c, mark, 'mallory')).toBe(false)
    expect(isOurs(c, mark, 'alice')).toBe(true)
  })
})

describe('truncate', () => {
  const note = '\n[cut]\n'

  it('leaves text that fits alone', () => {
    expect(truncate('short', 10, note)).toBe('short')
    expect(truncate('x'.repeat(10), 10, note)).toBe('x'.repeat(10))
  })

  it('cuts at a line end near the limit and appends the note', () => {
    const text = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n')
    const out = truncate(text, 200, note)
    expect(out.length).toBeLessThanOrEqual(200)
    expect(out.endsWith(note)).toBe(true)
    const kept = out.slice(0, -note.length)
    expect(text.startsWith(kept)).toBe(true)
    expect(text[kept.length]).toBe('\n')
  })

  it('never splits a surrogate pair', () => {
    const text = '😀'.repeat(100) // no line ends: the cut falls between code units
    for (let limit = 20; limit < 40; limit++) {
      const out = truncate(text, limit, note)
      expect(out.length).toBeLessThanOrEqual(limit)
      expect(out.isWellFormed()).toBe(true)
    }
  })

  it('closes an open code fence and open <details> blocks', () => {
    const text = ['<details><summary>per target</summary>', '', '```text', ...Array(200).fill('row row row')].join('\n')
    const out = truncate(text, 500, note)
    expect(out.length).toBeLessThanOrEqual(500)
    const body = out.slice(0, -note.length)
    expect(body.endsWith('\n```\n</details>')).toBe(true)
  })

  it('does not count <details> inside a code fence', () => {
    const text = ['```', '<details>', '```', ...Array(200).fill('text')].join('\n')
    const out = truncate(text, 300, note)
    expect(out.slice(0, -note.length).endsWith('</details>')).toBe(false)
  })

  it('stays within the limit for any limit', () => {
    const text = ['<details>', '~~~', ...Array(50).fill('ab 😀 cd')].join('\n')
    for (let limit = 0; limit < 200; limit++) {
      expect(truncate(text, limit, note).length).toBeLessThanOrEqual(limit)
    }
  })
})

describe('commentBody', () => {
  it('starts with the marker and fits GitHub\'s limit with a pointer to the full report', () => {
    const huge = Array.from({ length: 20_000 }, (_, i) => `| target-${i} | 1.2ms | 3.4ms |`).join('\n')
    const body = commentBody(mark, huge, '[the job summary](https://example.test/run)')
    expect(body.startsWith(`${mark}\n`)).toBe(true)
    expect(body.length).toBeLessThanOrEqual(COMMENT_LIMIT)
    expect(body).toMatch(/cut to fit GitHub's comment size limit; the full report is in \[the job summary\]/)
  })

  it('is the marker plus the report when it fits', () => {
    expect(commentBody(mark, 'report', 'x')).toBe(`${mark}\nreport`)
  })
})
