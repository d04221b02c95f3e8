/**
 * The one sticky pull-request comment: found by a hidden marker at the start of its body and
 * by its author, created once, updated in place afterwards, left alone when unchanged, and cut
 * safely below GitHub's size limit.
 */
import type { GitHubApi } from './github.js'
import { httpStatus } from './github.js'

/** GitHub refuses comment bodies longer than this many characters. */
export const COMMENT_LIMIT = 65_536

/**
 * The hidden marker of the comment for one spec in one job, so that two loadgate steps in a pull
 * request keep two comments. `key` is free text; `-->` in it is neutralised.
 */
export function marker(key: string): string {
  return `<!-- loadgate-comment: ${key.replace(/--/g, '- -')} -->`
}

/** The full comment body: marker first, then the report, cut to fit `limit` with a note. */
export function commentBody(mark: string, markdown: string, fullReport: string, limit = COMMENT_LIMIT): string {
  const head = `${mark}\n`
  const note = `\n\n> [!NOTE]\n> This report was cut to fit GitHub's comment size limit; the full report is in ${fullReport}.\n`
  return head + truncate(markdown, limit - head.length, note)
}

/**
 * `text` if it fits in `limit` UTF-16 code units (GitHub counts characters; a code unit count is
 * never smaller), else its longest prefix that fits together with the closers and `note`: cut at a
 * line end when one is near, never inside a surrogate pair, with open code fences and `<details>`
 * blocks closed so the rest of the page renders.
 */
export function truncate(text: string, limit: number, note: string): string {
  if (text.length <= limit) return text
  // The closers depend on where the cut falls: shrink the budget until prefix, closers and
  // note fit together.
  let budget = limit - note.length
  for (;;) {
    if (budget <= 0) return note.slice(0, Math.max(0, limit))
    const prefix = cutAt(text, budget)
    const closed = prefix + closers(prefix) + note
    if (closed.length <= limit) return closed
    budget -= closed.length - limit
  }
}

/** The prefix of `text` at most `budget` long, ending at a line end if one lies in the last quarter. */
function cutAt(text: string, budget: number): string {
  let end = budget
  const code = text.charCodeAt(end - 1)
  if (code >= 0xd800 && code <= 0xdbff) end -= 1 // do not split a surrogate pair
  const nl = text.lastIndexOf('\n', end - 1)
  if (nl >= 0 && nl >= end - Math.max(1, Math.floor(budget / 4))) end = nl
  return text.slice(0, end)
}

/** What closes the code fence and the `<details>` blocks left open at the end of `prefix`. */
function closers(prefix: string): string {
  let fence: string | null = null
  let details = 0
  for (const line of prefix.split('\n')) {
    const m = line.match(/^\s{0,3}(`{3,}|~{3,})/)
    if (m) {
      if (fence === null) fence = m[1]
      else if (m[1][0] === fence[0] && m[1].length >= fence.length) fence = null
      continue
    }
    if (fence !== null) continue
    details += (line.match(/<details[\s>]/gi) ?? []).length
    details -= (line.match(/<\/details>/gi) ?? []).length
    if (details < 0) details = 0
  }
  let out = fence !== null ? `\n${fence}` : ''
  for (let i = 0; i < details; i++) out += '\n</details>'
  return out
}

/** The fields of an issue comment that finding ours reads. */
export interface IssueComment {
  id: number
  body?: string | null
  user?: { login: string; type?: string } | null
}

/**
 * Ours: the body starts with `mark`, and the author is a bot (the workflow token's
 * `github-actions[bot]`, or an app) or `self` (the token's user, for personal tokens).
 * A human quoting the marker does not start a body with it.
 */
export function isOurs(c: IssueComment, mark: string, self?: string): boolean {
  if (!(c.body ?? '').startsWith(mark)) return false
  return c.user?.type === 'Bot' || (self !== undefined && c.user?.login === self)
}

export type CommentOutcome = 'created' | 'updated' | 'unchanged' | 'skipped' | 'forbidden'

export interface UpsertOptions {
  owner: string
  repo: string
  issueNumber: number
  mark: string
  body: string
  /** When false, only an existing comment is updated (a passing run after a failing one). */
  create: boolean
}

/**
 * Creates or updates the sticky comment. A 403 (a fork's read-only token) is not an error: it
 * returns `forbidden` and the caller warns.
 */
export async function upsertComment(api: GitHubApi, o: UpsertOptions): Promise<{ outcome: CommentOutcome; url?: string }> {
  try {
    const existing = await findComment(api, o)
    if (existing) {
      if (existing.body === o.body) return { outcome: 'unchanged', url: existing.html_url }
      const { data } = await api.rest.issues.updateComment({
        owner: o.owner,
        repo: o.repo,
        comment_id: existing.id,
        body: o.body
      })
      return { outcome: 'updated', url: data.html_url }
    }
    if (!o.create) return { outcome: 'skipped' }
    const { data } = await api.rest.issues.createComment({
      owner: o.owner,
      repo: o.repo,
      issue_number: o.issueNumber,
      body: o.body
    })
    return { outcome: 'created', url: data.html_url }
  } catch (error) {
    if (httpStatus(error) === 403) return { outcome: 'forbidden' }
    throw error
  }
}

type FoundComment = IssueComment & { html_url: string }

async function findComment(api: GitHubApi, o: UpsertOptions): Promise<FoundComment | undefined> {
  const marked: FoundComment[] = []
  const pages = api.paginate.iterator(api.rest.issues.listComments, {
    owner: o.owner,
    repo: o.repo,
    issue_number: o.issueNumber,
    per_page: 100
  })
  for await (const page of pages) {
    for (const c of page.data as FoundComment[]) {
      if (isOurs(c, o.mark)) return c
      if ((c.body ?? '').startsWith(o.mark)) marked.push(c)
    }
  }
  if (marked.length === 0) return undefined
  // Marked comments by a user: ours only if the token belongs to that user.
  const self = await tokenLogin(api)
  return marked.find((c) => isOurs(c, o.mark, self))
}

/** The login of the token's user; `undefined` for installation tokens, which cannot ask. */
async function tokenLogin(api: GitHubApi): Promise<string | undefined> {
  try {
    const { data } = await api.rest.users.getAuthenticated()
    return data.login
  } catch {
    return undefined
  }
}
