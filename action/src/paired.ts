/**
 * `mode: paired`: the pull request's base (the merge base of HEAD with the base branch) checked
 * out into a second git worktree beside the workspace, the `build` command run in both
 * checkouts, and the `loadgate ab` command line that loads both at the same time.
 *
 * The sides are told apart by two `${NAME}`s (`PAIRED_NAMES`): `ROOT`, the side's checkout,
 * and `PORT`, a free loopback port of its own, so that a spec's service can say
 * `command: ["${ROOT}/target/release/server", "--port", "${PORT}"]`. Deciding the command line
 * (`abArgs`, `sideDir`) is pure; the rest runs git, bash and a port probe.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { isAbsolute, join, relative } from 'node:path'
import * as core from '@actions/core'
import * as exec from '@actions/exec'

/** The two commits of a paired run, and the repository that holds them. */
export interface PairedBase {
  /** The top folder of the git work tree that holds the working directory: the candidate's checkout. */
  repo: string
  /** The commit checked out in `repo` (HEAD): the candidate. */
  head: string
  /** The merge base of HEAD with the base branch: the baseline. */
  commit: string
  /** The base branch, e.g. `main`. */
  branch: string
}

interface GitOutput {
  code: number
  stdout: string
  stderr: string
}

/** Runs `git ARGS` in `cwd` without echoing it; the caller says what matters in the log. */
async function git(cwd: string, args: string[]): Promise<GitOutput> {
  const r = await exec.getExecOutput('git', args, { cwd, ignoreReturnCode: true, silent: true })
  return { code: r.exitCode, stdout: r.stdout.trim(), stderr: r.stderr.trim() }
}

const FETCH_DEPTH_HINT = "check out with actions/checkout's `fetch-depth: 0` (the whole history) before this step"

/**
 * Finds the baseline commit: `git merge-base HEAD origin/BRANCH` in the repository that holds
 * `cwd`. A shallow checkout, or one without the base branch, first fetches the branch from
 * `origin` (`--unshallow` when shallow, so that the merge base is there). Throws a message that
 * says what is missing and recommends `fetch-depth: 0`.
 */
export async function findBase(cwd: string, branch: string, log: (line: string) => void): Promise<PairedBase> {
  const top = await git(cwd, ['rev-parse', '--show-toplevel'])
  if (top.code !== 0) {
    throw new Error(`mode: paired needs a git checkout, but ${cwd} is not in a git work tree (${top.stderr}); ${FETCH_DEPTH_HINT}`)
  }
  const repo = top.stdout
  const head = (await git(repo, ['rev-parse', 'HEAD'])).stdout
  const ref = `refs/remotes/origin/${branch}`
  const shallow = (await git(repo, ['rev-parse', '--is-shallow-repository'])).stdout === 'true'
  const known = (await git(repo, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).code === 0
  if (shallow || !known) {
    log(`Fetching ${branch} from origin${shallow ? ', and the history this shallow checkout lacks (--unshallow)' : ''}`)
    const fetched = await git(repo, ['fetch', '--no-tags', ...(shallow ? ['--unshallow'] : []), 'origin', `+refs/heads/${branch}:${ref}`])
    if (fetched.code !== 0) {
      throw new Error(`mode: paired: cannot fetch the base branch ${branch} from origin (git says: ${lastLine(fetched.stderr)}); ${FETCH_DEPTH_HINT}`)
    }
  }
  const base = await git(repo, ['merge-base', 'HEAD', ref])
  if (base.code !== 0) {
    throw new Error(
      `mode: paired: HEAD (${head.slice(0, 7)}) and ${branch} have no merge base in this checkout: the history between them is missing; ${FETCH_DEPTH_HINT}`
    )
  }
  log(`Baseline: ${base.stdout.slice(0, 7)}, the merge base of HEAD (${head.slice(0, 7)}) with ${branch}`)
  return { repo, head, commit: base.stdout, branch }
}

function lastLine(text: string): string {
  return text.split('\n').filter((l) => l.trim() !== '').pop() ?? 'nothing'
}

/**
 * Checks `base.commit` out into a new folder under `parent` (a detached git worktree), calls
 * `use` with that folder, and removes the worktree afterwards, also when `use` throws.
 */
export async function withWorktree<T>(base: PairedBase, parent: string, use: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(parent, 'loadgate-base-'))
  try {
    const added = await git(base.repo, ['worktree', 'add', '--detach', dir, base.commit])
    if (added.code !== 0) throw new Error(`mode: paired: cannot check out the base ${base.commit.slice(0, 7)} into ${dir}: ${added.stderr}`)
    core.info(`Checked out the baseline ${base.commit.slice(0, 7)} into ${dir}`)
    return await use(dir)
  } finally {
    const removed = await git(base.repo, ['worktree', 'remove', '--force', dir])
    if (removed.code !== 0) {
      rmSync(dir, { recursive: true, force: true })
      await git(base.repo, ['worktree', 'prune'])
    }
  }
}

/**
 * The working directory `cwd` (inside the candidate's checkout `repo`) as the same folder of the
 * baseline's checkout `worktree`.
 */
export function sideDir(repo: string, cwd: string, worktree: string): string {
  const inside = relative(repo, cwd)
  if (inside.startsWith('..') || isAbsolute(inside)) {
    throw new Error(`the working directory ${cwd} is not inside the git checkout ${repo}`)
  }
  return join(worktree, inside)
}

/**
 * Runs the `build` input with bash (`-eo pipefail`, as a workflow's `run:` step does) in one
 * side's working directory, in its own log group, with the environment of the action's child
 * processes (`env`: child.ts). Throws when it fails.
 */
export async function build(command: string, cwd: string, side: 'baseline' | 'candidate', commit: string, env: Record<string, string>): Promise<void> {
  if (!existsSync(cwd)) {
    throw new Error(`mode: paired: the working directory ${cwd} does not exist in the ${side}'s checkout (${commit.slice(0, 7)})`)
  }
  const title = `Build the ${side} (${commit.slice(0, 7)}) in ${cwd}`
  const code = await core.group(title, () =>
    exec.exec('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', command], { cwd, env, ignoreReturnCode: true })
  )
  if (code !== 0) {
    throw new Error(`input \`build\` failed for the ${side} (${commit.slice(0, 7)}) with exit code ${code}; its output is in the group "${title}"`)
  }
}

/** `n` distinct free TCP ports on 127.0.0.1: each bound to port 0 at the same time, then released. */
export async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = []
  try {
    for (let i = 0; i < n; i++) {
      const s = createServer()
      servers.push(s)
      await new Promise<void>((done, fail) => {
        s.once('error', fail)
        s.listen(0, '127.0.0.1', done)
      })
    }
    return servers.map((s) => (s.address() as { port: number }).port)
  } finally {
    await Promise.all(servers.map((s) => new Promise((done) => s.close(done))))
  }
}

/** What `loadgate ab` needs beyond the engine. */
export interface AbCommand {
  /** The spec file, absolute (the candidate's). */
  spec: string
  /** The baseline's checkout (the worktree) and the candidate's (the workspace's repository), absolute. */
  roots: { baseline: string; candidate: string }
  /** A free port each. */
  ports: { baseline: number; candidate: number }
  /** The ab document to write. */
  out: string
  /** The `args` input's words, last. */
  args: string[]
}

/**
 * `ab SPEC --baseline ROOT=... --baseline PORT=... --candidate ROOT=... --candidate PORT=...
 * --out OUT [args]`.
 */
export function abArgs(c: AbCommand): string[] {
  if (c.ports.baseline === c.ports.candidate) throw new Error(`both sides got port ${c.ports.baseline}`)
  const side = (flag: string, root: string, port: number) => [flag, `ROOT=${root}`, flag, `PORT=${port}`]
  return [
    'ab',
    c.spec,
    ...side('--baseline', c.roots.baseline, c.ports.baseline),
    ...side('--candidate', c.roots.candidate, c.ports.candidate),
    '--out',
    c.out,
    ...c.args
  ]
}
