import { describe, expect, it } from 'vitest'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { COMMENT_LIMIT, commentBody, ENGINE_MARKDOWN_BUDGET, isOurs, marker, NOTE_LIMIT, upsertComment, withNote } from '../../src/comment.js'

const engineSrc = fileURLToPath(new URL('../../../engine/src', import.meta.url))

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

describe('the report in the summary and the comment', () => {
  it('is the note quoted above the engine\'s Markdown, which is never cut', () => {
    const report = Array.from({ length: 20_000 }, (_, i) => `| target-${i} | 1.2ms | 3.4ms |`).join('\n')
    const framed = withNote('Baseline: run #100.', report)
    expect(framed).toBe(`> Baseline: run #100.\n\n${report}`)
    expect(commentBody(mark, framed)).toBe(`${mark}\n${framed}`)
  })

  it('cuts only a note longer than NOTE_LIMIT, with an ellipsis, never inside a surrogate pair', () => {
    expect(withNote('x'.repeat(NOTE_LIMIT), 'R')).toBe(`> ${'x'.repeat(NOTE_LIMIT)}\n\nR`)
    const long = withNote('y'.repeat(NOTE_LIMIT + 1), 'R')
    expect(long).toBe(`> ${'y'.repeat(NOTE_LIMIT - 1)}…\n\nR`)
    for (const pad of [0, 1]) {
      const note = withNote('z'.repeat(pad) + '😀'.repeat(NOTE_LIMIT), 'R').split('\n')[0].slice(2)
      expect(note.length).toBeLessThanOrEqual(NOTE_LIMIT)
      expect(note.endsWith('…')).toBe(true)
      expect(note.isWellFormed()).toBe(true)
    }
  })

  it("the engine's Markdown budget, the longest note and a long marker fit GitHub's limit", () => {
    // The engine's constant, wherever its report module keeps it.
    const found = [...readdirSync(engineSrc, { recursive: true, encoding: 'utf8' })]
      .filter((f) => f.endsWith('.rs'))
      .map((f) => readFileSync(join(engineSrc, f), 'utf8').match(/const MARKDOWN_BUDGET: usize = ([\d_]+);/)?.[1])
      .filter((m) => m !== undefined)
    expect(found).toEqual([String(ENGINE_MARKDOWN_BUDGET).replace(/(\d)(?=(\d{3})+$)/g, '$1_')])
    // A workflow file name, a job id and an artifact name of 255 characters each.
    const longMark = marker(`${'w'.repeat(250)}.yml/${'j'.repeat(255)}/${'a'.repeat(255)}`)
    const report = 'r'.repeat(ENGINE_MARKDOWN_BUDGET)
    expect(commentBody(longMark, withNote('n'.repeat(NOTE_LIMIT * 2), report)).length).toBeLessThanOrEqual(COMMENT_LIMIT)
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
