/**
 * The data branch (input `history-branch`): a branch of the repository that keeps results as
 * `loadgate history add` files them (`<spec>/<time>-<commit>-<hash>.json`: one new file per
 * result, so writers never edit the same file), so that history outlives artifacts, as
 * github-action-benchmark keeps its data on gh-pages.
 *
 * Every run fetches the branch's tip read-only (depth 1) into a repository of its own under
 * RUNNER_TEMP (`fetchBranch`), never into the user's checkout; the folder is what the engine gets
 * as `--baseline-history`. A run that may write (`writesHistory`: never a pull request) adds its
 * result there, commits and pushes (`addToBranch`); a push that is rejected because another run
 * pushed first is retried on the branch's new tip, the result added again, a bounded number of
 * times with a growing, jittered wait. A branch that does not exist yet is created as an orphan.
 *
 * The action's steps around it (`openDataBranch`, `fetchData`, `historyOf`, `recordResult`) log
 * what they do; main.ts calls them.
 *
 * The token reaches git only through the environment of each git command, as the
 * `http.<server>.extraheader` that actions/checkout uses (`GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_n`,
 * `GIT_CONFIG_VALUE_n`, git 2.31): never on a command line, in a config file, or in the log
 * (git's output is masked before it is quoted).
 */
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as core from '@actions/core'
import { mask, type Children } from './child.js'
import type { RunContext } from './context.js'
import type { Inputs } from './inputs.js'
import { specName } from './result.js'

/** Where the data branch lives, and what git runs with. */
export interface DataBranch {
  /** The repository's URL, e.g. `https://github.com/octo/shop.git` (or `file://` in tests). */
  remote: string
  /** The branch, e.g. `loadgate-history`. */
  branch: string
  /** The token for HTTP(S) remotes; '' for none. */
  token: string
  /** The environment of git's processes (the children's: child.ts), without the token. */
  env: Record<string, string>
  /** Values masked in every message quoting git (the token and its header among them). */
  secrets: string[]
}

/** The branch fetched into a folder of its own. */
export interface Checkout {
  /** The work tree: the branch's files, and `.git`. */
  dir: string
  /** The branch was on the remote; false: the folder is empty, on an unborn (orphan) branch. */
  exists: boolean
}

/** Why there is no checkout: the branch could not be fetched (a network or permission error). */
export interface NotFetched {
  failed: string
}

/**
 * The `extraheader` value for `token`: HTTP basic authentication as `x-access-token`, as
 * actions/checkout sends it. It is a secret too: base64 of the token.
 */
export function authHeader(token: string): string {
  return `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`
}

/**
 * The secrets that `token` gives rise to: the token, and its header's base64 (which a git trace
 * would show); the caller registers them with the runner (`core.setSecret`).
 */
export function tokenSecrets(token: string): string[] {
  return token === '' ? [] : [token, authHeader(token).split(' ').pop()!]
}

/**
 * git's environment for `b`: its `env`, no prompt for credentials, messages in English (they are
 * read), and with a token the `http.<origin>/.extraheader` for the remote's server only, appended
 * to any `GIT_CONFIG_COUNT` entries already in `env`.
 */
export function gitEnv(b: Pick<DataBranch, 'remote' | 'token' | 'env'>): Record<string, string> {
  const env: Record<string, string> = { ...b.env, GIT_TERMINAL_PROMPT: '0', GCM_INTERACTIVE: 'never', LC_ALL: 'C' }
  if (b.token === '' || !/^https?:/.test(b.remote)) return env
  const n = Number(env.GIT_CONFIG_COUNT ?? '0')
  const at = Number.isSafeInteger(n) && n >= 0 ? n : 0
  env.GIT_CONFIG_COUNT = String(at + 1)
  env[`GIT_CONFIG_KEY_${at}`] = `http.${new URL(b.remote).origin}/.extraheader`
  env[`GIT_CONFIG_VALUE_${at}`] = authHeader(b.token)
  return env
}

interface GitOutput {
  code: number
  /** Standard output and error together, trimmed, secrets masked. */
  output: string
  stdout: string
}

/** The longest a git command may take (a fetch or a push over a slow network). */
const GIT_TIMEOUT_MS = 180_000

/** Runs `git ARGS` in `cwd` with the branch's environment, quietly; never throws. */
function git(b: DataBranch, cwd: string, args: string[]): Promise<GitOutput> {
  return new Promise((done) => {
    execFile('git', args, { cwd, env: gitEnv(b), timeout: GIT_TIMEOUT_MS, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
      done({ code, stdout: stdout.trim(), output: mask(`${stdout}\n${stderr}`.trim(), b.secrets) })
    })
  })
}

/** git's last line that says something, for messages. */
function said(r: GitOutput): string {
  return r.output.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('hint:')).pop() ?? `exit code ${r.code}`
}

/** Checks that `git ARGS` succeeded; throws a message naming `what` and git's last line. */
async function must(b: DataBranch, cwd: string, args: string[], what: string): Promise<GitOutput> {
  const r = await git(b, cwd, args)
  if (r.code !== 0) throw new Error(`cannot ${what} (git says: ${said(r)})`)
  return r
}

/**
 * Whether a push failed because another run pushed first: `[rejected]` (fetch first,
 * non-fast-forward), or `[remote rejected]` for the ref's lock taken or moved under it. Other
 * refusals (a protected branch, a hook) and errors (the token may not write) are not races.
 */
export function lostRace(output: string): boolean {
  return /(^|\s)\[rejected\]/m.test(output) || /\[remote rejected\].*(failed to update ref|cannot lock ref|incorrect old value)/.test(output)
}

/** Why a push failed: git's line about the ref (`! HEAD:refs/heads/B [remote rejected] (...)`), else its last line. */
function pushRefusal(r: GitOutput): string {
  const line = r.output.split('\n').find((l) => /rejected\]/.test(l))
  return line ? line.replace(/^!\s*/, '').replace(/\t/g, ' ') : said(r)
}

const REMOTE_REF = (branch: string) => `refs/remotes/origin/${branch}`

/** Fetches the branch's tip (depth 1) into `dir`; whether the remote has the branch. */
async function fetchTip(b: DataBranch, dir: string): Promise<boolean> {
  // `--exit-code`: 2 when the remote has no such branch, which is not an error.
  const listed = await git(b, dir, ['ls-remote', '--exit-code', '--heads', 'origin', `refs/heads/${b.branch}`])
  if (listed.code === 2) return false
  if (listed.code !== 0) throw new Error(`cannot reach ${b.remote} (git says: ${said(listed)})`)
  await must(b, dir, ['fetch', '--quiet', '--no-tags', '--depth=1', 'origin', `+refs/heads/${b.branch}:${REMOTE_REF(b.branch)}`], `fetch ${b.branch}`)
  return true
}

/**
 * The branch's tip checked out into a new folder under `parent` (a repository of its own), or
 * an empty folder on the unborn branch when the remote has none; `NotFetched` when the remote
 * cannot be read.
 */
export async function fetchBranch(b: DataBranch, parent: string): Promise<Checkout | NotFetched> {
  mkdirSync(parent, { recursive: true })
  const dir = mkdtempSync(join(parent, 'history-branch-'))
  try {
    await must(b, dir, ['init', '--quiet', `--initial-branch=${b.branch}`], 'make a repository for the data branch')
    await must(b, dir, ['remote', 'add', 'origin', b.remote], 'name the remote')
    const exists = await fetchTip(b, dir)
    if (exists) await must(b, dir, ['checkout', '--quiet', '-B', b.branch, REMOTE_REF(b.branch)], `check out ${b.branch}`)
    return { dir, exists }
  } catch (error) {
    return { failed: (error as Error).message }
  }
}

/** How `addToBranch` retries a rejected push. */
export interface Retry {
  /** Tries in all, the first included. */
  attempts: number
  /** The wait before the second try, in milliseconds; doubled for each further one, plus up to as much again at random. */
  backoffMs: number
  /** Waits `ms` milliseconds (a test may shorten it). */
  sleep: (ms: number) => Promise<void>
}

export const RETRY: Retry = {
  attempts: 6,
  backoffMs: 1000,
  sleep: (ms) => new Promise((done) => setTimeout(done, ms))
}

/** What `addToBranch` did. */
export type Added =
  | { outcome: 'pushed'; commit: string; attempts: number }
  /** The result was on the branch already (the same file): nothing to commit. */
  | { outcome: 'unchanged'; attempts: number }
  | { outcome: 'failed'; reason: string; attempts: number }

/** What a commit on the data branch is made of. */
export interface Commit {
  /** Adds the result to the work tree `dir` (`loadgate history add dir result.json ...`); throws when it cannot. */
  add: (dir: string) => Promise<void>
  /** The commit message. */
  message: string
}

/** The committer of the data branch's commits (the workflow token's bot, as other actions use). */
const COMMITTER = ['-c', 'user.name=github-actions[bot]', '-c', 'user.email=41898282+github-actions[bot]@users.noreply.github.com']

/** The README of a data branch this action creates. */
const README = `# loadgate history

Written by the loadgate action (input \`history-branch\`): one result file per run of the
default branch's pushes and of scheduled and manual runs, as \`loadgate history add\` files
them (\`<spec>/<time>-<commit>-<hash>.json\`). Read it with \`loadgate history list|show <folder>\`
and \`loadgate report --dashboard <folder>\`. Do not edit these files by hand.
`

/**
 * Adds a result to the checked-out data branch `co`, commits and pushes; on a rejected push
 * (another run pushed first: the files never collide, so nothing is merged) fetches the new tip,
 * resets to it, adds the result again and retries, at most `retry.attempts` tries in all with a
 * growing wait. Any other failure (the token may not write, a protected branch) ends it. Never
 * throws for git: the outcome says.
 */
export async function addToBranch(b: DataBranch, co: Checkout, c: Commit, retry: Retry = RETRY): Promise<Added> {
  let exists = co.exists
  for (let attempt = 1; ; attempt++) {
    try {
      if (!exists) writeFileSync(join(co.dir, 'README.md'), README)
      await c.add(co.dir)
      await must(b, co.dir, ['add', '--all'], 'stage the result')
      const staged = await git(b, co.dir, ['diff', '--cached', '--quiet'])
      if (staged.code === 0) return { outcome: 'unchanged', attempts: attempt }
      await must(b, co.dir, [...COMMITTER, '-c', 'commit.gpgsign=false', 'commit', '--quiet', '--no-verify', '-m', c.message], 'commit the result')
      const pushed = await git(b, co.dir, ['push', '--porcelain', 'origin', `HEAD:refs/heads/${b.branch}`])
      if (pushed.code === 0) {
        const head = await must(b, co.dir, ['rev-parse', 'HEAD'], 'read the commit')
        return { outcome: 'pushed', commit: head.stdout, attempts: attempt }
      }
      const raced = lostRace(pushed.output)
      if (!raced || attempt >= retry.attempts) {
        const why = raced ? `the push was still rejected after ${attempt} tries, as other runs pushed first` : pushRefusal(pushed)
        return { outcome: 'failed', reason: `cannot push to ${b.branch} (${why})`, attempts: attempt }
      }
      await retry.sleep(retry.backoffMs * 2 ** (attempt - 1) * (1 + Math.random()))
      exists = await fetchTip(b, co.dir)
      if (!exists) throw new Error(`${b.branch} was rejected by the remote, yet it has no such branch`)
      await must(b, co.dir, ['reset', '--quiet', '--hard', REMOTE_REF(b.branch)], `reset to the tip of ${b.branch}`)
      await must(b, co.dir, ['clean', '--quiet', '-d', '--force'], 'clean the work tree')
    } catch (error) {
      return { outcome: 'failed', reason: (error as Error).message, attempts: attempt }
    }
  }
}

/** The events whose runs write to the data branch (`writesHistory`). */
const WRITING_EVENTS = ['push', 'schedule', 'workflow_dispatch']

/**
 * Whether this run adds its result to the data branch: a push to the default branch, or a
 * scheduled or dispatched run (on the branch it ran on, which the result records). Never a pull
 * request of any kind (`pull_request`, `pull_request_target`): their code is not on the branch,
 * and may come from a fork.
 */
export function writesHistory(ctx: Pick<RunContext, 'eventName' | 'refName' | 'defaultBranch' | 'pullRequest'>): boolean {
  if (ctx.pullRequest !== undefined || ctx.eventName.startsWith('pull_request')) return false
  if (!WRITING_EVENTS.includes(ctx.eventName)) return false
  return ctx.eventName !== 'push' || (ctx.defaultBranch !== undefined && ctx.refName === ctx.defaultBranch)
}

/**
 * The data branch that `history-branch` names in `ctx`'s repository, reached at the server's
 * address with the token (registered with the runner as a secret, with its header); unset
 * without the input, and in paired mode, which compares with no stored result.
 */
export function openDataBranch(inputs: Pick<Inputs, 'historyBranch' | 'mode' | 'token'>, ctx: RunContext, kids: Children): DataBranch | undefined {
  if (inputs.historyBranch === '') return undefined
  if (inputs.mode === 'paired') {
    core.info(`The history branch ${inputs.historyBranch} is not used: a paired run compares with the base it runs beside.`)
    return undefined
  }
  const secrets = [...new Set([...kids.secrets, ...tokenSecrets(inputs.token)])]
  for (const secret of secrets) core.setSecret(secret)
  return { remote: `${ctx.serverUrl}/${ctx.owner}/${ctx.repo}.git`, branch: inputs.historyBranch, token: inputs.token, env: kids.env, secrets }
}

/**
 * The data branch fetched read-only into a folder of its own under `parent` (by every run that
 * has one: pull requests read it, runs that write add to it); unset without one, or when it
 * cannot be fetched (a warning: the artifact's window stays the history).
 */
export async function fetchData(b: DataBranch | undefined, parent: string): Promise<Checkout | undefined> {
  if (!b) return undefined
  const got = await core.group(`Fetch the history branch ${b.branch}`, () => fetchBranch(b, parent))
  if ('failed' in got) {
    core.warning(`The history branch ${b.branch} cannot be read, so the artifact's history window is used instead: ${got.failed}`)
    return undefined
  }
  core.info(got.exists ? `History branch ${b.branch}: fetched into ${got.dir}` : `History branch ${b.branch}: not there yet`)
  return got
}

/**
 * What the engine gets as `--baseline-history`: the data branch's folder when the branch exists,
 * else the baseline artifact's window `history/` (`window`), else nothing; the log says which.
 */
export function historyOf(b: DataBranch | undefined, data: Checkout | undefined, window: string | undefined): string | undefined {
  if (b && data?.exists) {
    core.info(`Baseline history: the branch ${b.branch} (${data.dir})`)
    return data.dir
  }
  const why = b === undefined ? 'no `history-branch` is set' : `the branch ${b.branch} ${data ? 'does not exist yet' : 'cannot be read'}`
  core.info(window ? `Baseline history: the baseline artifact's window history/, as ${why}` : `Baseline history: none (${why}, and the baseline artifact has no history/)`)
  return window
}

/** The words for the note above the report when the baseline's history is the data branch; '' otherwise. */
export function fromBranch(b: DataBranch | undefined, data: Checkout | undefined): string {
  return b && data?.exists ? ` Its history: the results on the branch \`${b.branch}\`.` : ''
}

/** The run's result, for `recordResult`. */
export interface Recording {
  ctx: RunContext
  resultPath: string
  /** An invalid measurement is not added. */
  invalid: boolean
  /** Runs `loadgate ARGS`; throws the engine's message when it fails. */
  engine: (args: string[]) => Promise<void>
}

/**
 * After the report: a run that writes (`writesHistory`: never a pull request) adds its result,
 * unless the measurement is invalid, with `loadgate history add` (recording the branch, the
 * commit and its page), commits and pushes (`addToBranch`). A failure is a warning: the verdict
 * stands. Returns the words for the note ('' when nothing was tried) and the checkout's folder
 * when it holds results (the `history-dir` output).
 */
export async function recordResult(b: DataBranch | undefined, data: Checkout | undefined, r: Recording): Promise<{ note: string; dir?: string }> {
  if (!b || !data) return { note: '' }
  const { ctx } = r
  const dir = data.exists ? data.dir : undefined
  if (!writesHistory(ctx)) return { note: '', dir }
  if (r.invalid) return { note: `\nNot added to the history branch \`${b.branch}\`: the measurement is invalid.`, dir }
  const source = ['--branch', ctx.refName]
  if (ctx.sha !== '') source.push('--commit', ctx.sha, '--commit-url', `${ctx.serverUrl}/${ctx.owner}/${ctx.repo}/commit/${ctx.sha}`)
  const commit: Commit = {
    add: (tree) => r.engine(['history', 'add', tree, r.resultPath, ...source]),
    message: `loadgate: ${specName(r.resultPath) ?? 'a'} result of ${ctx.sha.slice(0, 12) || ctx.refName} (${ctx.eventName}, run ${ctx.runId})`
  }
  const added = await core.group(`Add the result to the history branch ${b.branch}`, () => addToBranch(b, data, commit))
  if (added.outcome === 'failed') {
    core.warning(
      `Could not add the result to the history branch ${b.branch}: ${added.reason}. The token needs \`contents: write\`; the verdict, the outputs and the artifact are unaffected.`
    )
    return { note: `\nNot added to the history branch \`${b.branch}\` (see the warning in the log).`, dir }
  }
  const what =
    added.outcome === 'pushed' ? `commit ${added.commit.slice(0, 7)}${added.attempts > 1 ? `, after ${added.attempts} tries` : ''}` : 'it was there already'
  core.info(`Added the result to the history branch ${b.branch} (${what})`)
  return { note: `\nAdded to the history branch \`${b.branch}\` (${what}).`, dir: data.dir }
}

/** A result file on the data branch (`newestResult`). */
export interface StoredResult {
  path: string
  /** `started_at`, RFC 3339. */
  startedAt: string
  /** The measured commit (`source.commit`), when the result records it. */
  commit: string | undefined
}

/**
 * The newest result in the folder `dir` (read recursively; names starting with `.`, such as
 * `.git`, skipped) of the spec named `spec` measured on `branch` (`source.branch`), whose
 * measurement is valid; undefined when there is none (or no `spec`). Files that are not results
 * are passed over.
 */
export function newestResult(dir: string, spec: string | undefined, branch: string): StoredResult | undefined {
  if (spec === undefined) return undefined
  let newest: StoredResult | undefined
  for (const path of jsonFiles(dir)) {
    let r
    try {
      r = JSON.parse(readFileSync(path, 'utf8'))
    } catch {
      continue
    }
    const startedAt: unknown = r?.started_at
    if (r?.spec?.name !== spec || r?.source?.branch !== branch || r?.health?.valid === false || typeof startedAt !== 'string') continue
    if (newest === undefined || Date.parse(startedAt) > Date.parse(newest.startedAt)) {
      newest = { path, startedAt, commit: typeof r.source.commit === 'string' ? r.source.commit : undefined }
    }
  }
  return newest
}

/** The `*.json` files under `dir`, recursively, skipping names that start with `.`. */
function jsonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name.startsWith('.')) return []
    const path = join(dir, e.name)
    if (e.isDirectory()) return jsonFiles(path)
    return e.isFile() && e.name.endsWith('.json') ? [path] : []
  })
}
