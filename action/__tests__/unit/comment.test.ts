import { describe, expect, it } from 'vitest'
import { COMMENT_LIMIT, commentBody, isOurs, marker, truncate, upsertComment } from '../../src/comment.js'

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

describe('upsertComment', () => {
  type C = { id: number; body: string; user: { login: string; type: string }; html_url: string }
  /** Just the calls upsertComment makes, over an in-memory list, paged by two. */
  function fakeApi(comments: C[], opts: { forbid?: boolean; self?: string } = {}) {
    const calls: string[] = []
    const forbidden = () => Object.assign(new Error('Resource not accessible by integration'), { status: 403 })
    const api = {
      rest: {
        issues: {
          listComments: {},
          createComment: async ({ body }: { body: string }) => {
            calls.push('create')
            if (opts.forbid) throw forbidden()
            const c = { id: 99, body, user: { login: 'github-actions[bot]', type: 'Bot' }, html_url: 'u/99' }
            comments.push(c)
            return { data: c }
          },
          updateComment: async ({ comment_id, body }: { comment_id: number; body: string }) => {
            calls.push(`update ${comment_id}`)
            if (opts.forbid) throw forbidden()
            const c = comments.find((x) => x.id === comment_id)!
            c.body = body
            return { data: c }
          }
        },
        users: {
          getAuthenticated: async () => {
            calls.push('whoami')
            if (!opts.self) throw forbidden()
            return { data: { login: opts.self } }
          }
        }
      },
      paginate: {
        iterator: async function* () {
          for (let i = 0; i < comments.length || i === 0; i += 2) {
            calls.push(`page ${i / 2 + 1}`)
            yield { data: comments.slice(i, i + 2) }
          }
        }
      }
    }
    return { api: api as unknown as Parameters<typeof upsertComment>[0], calls }
  }
  const bot = { login: 'github-actions[bot]', type: 'Bot' }
  const alice = { login: 'alice', type: 'User' }
  const o = { owner: 'o', repo: 'r', issueNumber: 7, mark, create: true }

  it('creates the comment when there is none', async () => {
    const { api, calls } = fakeApi([{ id: 1, body: 'hi', user: alice, html_url: 'u/1' }])
    expect(await upsertComment(api, { ...o, body: `${mark}\nA` })).toEqual({ outcome: 'created', url: 'u/99' })
    expect(calls).toEqual(['page 1', 'create'])
  })

  it('updates ours found on a later page, and stops reading pages there', async () => {
    const list = [
      { id: 1, body: 'a', user: alice, html_url: 'u/1' },
      { id: 2, body: 'b', user: alice, html_url: 'u/2' },
      { id: 3, body: `${mark}\nold`, user: bot, html_url: 'u/3' },
      { id: 4, body: 'c', user: alice, html_url: 'u/4' },
      { id: 5, body: 'd', user: alice, html_url: 'u/5' }
    ]
    const { api, calls } = fakeApi(list)
    expect(await upsertComment(api, { ...o, body: `${mark}\nnew` })).toEqual({ outcome: 'updated', url: 'u/3' })
    expect(calls).toEqual(['page 1', 'page 2', 'update 3'])
    expect(list[2].body).toBe(`${mark}\nnew`)
  })

  it('leaves an unchanged comment alone', async () => {
    const { api, calls } = fakeApi([{ id: 3, body: `${mark}\nsame`, user: bot, html_url: 'u/3' }])
    expect(await upsertComment(api, { ...o, body: `${mark}\nsame` })).toEqual({ outcome: 'unchanged', url: 'u/3' })
    expect(calls).toEqual(['page 1'])
  })

  it('with create: false only updates', async () => {
    const { api, calls } = fakeApi([])
    expect(await upsertComment(api, { ...o, body: `${mark}\nA`, create: false })).toEqual({ outcome: 'skipped' })
    expect(calls).toEqual(['page 1'])
  })

  it("takes a user's marked comment only when the token is that user's", async () => {
    const mine = fakeApi([{ id: 3, body: `${mark}\nold`, user: alice, html_url: 'u/3' }], { self: 'alice' })
    expect((await upsertComment(mine.api, { ...o, body: `${mark}\nnew` })).outcome).toBe('updated')
    expect(mine.calls).toEqual(['page 1', 'whoami', 'update 3'])

    const installation = fakeApi([{ id: 3, body: `${mark}\nforged`, user: alice, html_url: 'u/3' }])
    expect((await upsertComment(installation.api, { ...o, body: `${mark}\nnew` })).outcome).toBe('created')
    expect(installation.calls).toEqual(['page 1', 'whoami', 'create'])
  })

  it('reports a read-only token (403) as forbidden instead of failing', async () => {
    const { api } = fakeApi([], { forbid: true })
    expect(await upsertComment(api, { ...o, body: `${mark}\nA` })).toEqual({ outcome: 'forbidden' })
  })

  it('lets other errors through', async () => {
    const { api } = fakeApi([])
    ;(api.rest.issues as unknown as { createComment: () => Promise<never> }).createComment = async () => {
      throw Object.assign(new Error('Server Error'), { status: 502 })
    }
    await expect(upsertComment(api, { ...o, body: `${mark}\nA` })).rejects.toThrow('Server Error')
  })
})
