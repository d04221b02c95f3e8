/**
 * The one sticky pull-request comment: found by a hidden marker at the start of its body and
 * by its author, created once, updated in place afterwards, left alone when unchanged. The
 * engine's report fits GitHub's size limit with room for the marker and the action's note.
 */
import type { GitHubApi } from './github.js'
import { httpStatus } from './github.js'

/** GitHub refuses comment bodies longer than this many characters. */
export const COMMENT_LIMIT = 65_536

/**
 * The engine keeps its Markdown report within this many characters (`MARKDOWN_BUDGET` in
 * engine/src/report), cutting it itself when needed: the report is cut there and nowhere else.
 * The rest of GitHub's limit is for what the action adds: the marker (made of a workflow file
 * name, a job id and an artifact name) and the note above the report, at most `NOTE_LIMIT`.
 */
export const ENGINE_MARKDOWN_BUDGET = 60_000

/** The longest note the action puts above the engine's report. */
export const NOTE_LIMIT = 2_000

/**
 * The hidden marker of the comment for one spec in one job, so that two loadgate steps in a pull
 * request keep two comments. `key` is free text; `-->` in it is neutralised.
 */
export function marker(key: string): string {
  return `<!-- loadgate-comment: ${key.replace(/--/g, '- -')} -->`
}

/**
 * The report as the job summary and the comment show it: the action's note (which baseline, or
 * why none; one paragraph per line) quoted above the engine's Markdown. A note longer than `NOTE_LIMIT`
 * (it may quote the engine's error message) is cut with `…`; the engine's Markdown is never cut.
 */
export function withNote(note: string, markdown: string): string {
  let line = note
  if (line.length > NOTE_LIMIT) {
    let end = NOTE_LIMIT - 1
    const code = line.charCodeAt(end - 1)
    if (code >= 0xd800 && code <= 0xdbff) end -= 1 // do not split a surrogate pair
    line = `${line.slice(0, end)}…`
  }
  return `${line
    .split('\n')
    .map((l) => `> ${l}`)
    .join('\n>\n')}\n\n${markdown}`
}

/** The full comment body: the marker first, then the report. */
export function commentBody(mark: string, report: string): string {
  return `${mark}\n${report}`
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
