/**
 * The data branch against real git: a bare repository standing in for GitHub's, reached by
 * `file://` and over HTTP through `git http-backend` with the token's header checked. Results are
 * added by a writer that files them as `loadgate history add` does (one new file per result); the
 * engine's own command is exercised by action.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  addToBranch,
  authHeader,
  fetchBranch,
  gitEnv,
  lostRace,
  newestResult,
  recordResult,
  tokenSecrets,
  writesHistory,
  type Checkout,
  type DataBranch,
  type Retry
} from '../../src/databranch.js'
import { git } from '../fixtures/git.js'
import type { RunContext } from '../../src/context.js'
import { GitHttp } from '../fixtures/githttp.js'

const BRANCH = 'loadgate-history'

/** A bare repository standing in for GitHub's, with `main` holding one commit (the user's code). */
function bareRepo(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'loadgate-data-')), 'shop.git')
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', dir])
  seedMain(dir)
  return dir
}

/** Pushes a `main` with one file to the bare repository `bare` (by path). */
function seedMain(bare: string): void {
  const work = mkdtempSync(join(tmpdir(), 'loadgate-seed-'))
  git(work, 'init', '-q', '-b', 'main')
  writeFileSync(join(work, 'app.txt'), 'the code\n')
  git(work, 'add', '-A')
  git(work, 'commit', '-q', '-m', 'code')
  git(work, 'push', '-q', bare, 'main')
}

function branch(remote: string, token = ''): DataBranch {
  return { remote, branch: BRANCH, token, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir() }, secrets: tokenSecrets(token) }
}

/** Adds result `n` as the engine files it: `<spec>/<name>.json`, a new file. */
function result(n: number) {
  return {
    add: async (dir: string) => {
      mkdirSync(join(dir, 'checkout'), { recursive: true })
      writeFileSync(join(dir, 'checkout', `20261127T1600${String(n).padStart(2, '0')}.000000Z-${'ab'.repeat(6)}-${n.toString(16).padStart(8, '0')}.json`), `{"n":${n}}\n`)
    },
    message: `loadgate: result ${n}`
  }
}

const fast: Retry = { attempts: 8, backoffMs: 20, sleep: (ms) => new Promise((done) => setTimeout(done, ms)) }

/** The result files on the branch in `bare`, by name. */
function filesOn(bare: string): string[] {
  return git(bare, 'ls-tree', '-r', '--name-only', BRANCH)
    .split('\n')
    .filter((f) => f.endsWith('.json'))
    .sort()
}

async function checkout(b: DataBranch): Promise<Checkout> {
  const co = await fetchBranch(b, mkdtempSync(join(tmpdir(), 'loadgate-runner-temp-')))
  if ('failed' in co) throw new Error(co.failed)
  return co
}

describe('the data branch over file://', () => {
  it('the first result creates the branch with no history of its own; the second is appended', async () => {
    const bare = bareRepo()
    const b = branch(`file://${bare}`)
    const first = await checkout(b)
    expect(first.exists).toBe(false)
    expect(readdirSync(first.dir)).toEqual(['.git'])
    const added = await addToBranch(b, first, result(1), fast)
    expect(added).toMatchObject({ outcome: 'pushed', attempts: 1 })
    expect(git(bare, 'rev-list', '--count', BRANCH)).toBe('1')
    // An orphan: it shares no commit with main.
    expect(() => git(bare, 'merge-base', 'main', BRANCH)).toThrow()
    expect(git(bare, 'ls-tree', '--name-only', BRANCH).split('\n').sort()).toEqual(['README.md', 'checkout'])

    const second = await checkout(b)
    expect(second.exists).toBe(true)
    expect(await addToBranch(b, second, result(2), fast)).toMatchObject({ outcome: 'pushed', attempts: 1 })
    expect(filesOn(bare)).toHaveLength(2)
    expect(git(bare, 'rev-list', '--count', BRANCH)).toBe('2')
    expect(git(bare, 'log', '-1', '--format=%s|%an', BRANCH)).toBe('loadgate: result 2|github-actions[bot]')
  })

  it('a reader gets the tip only, with every result, in a repository of its own', async () => {
    const bare = bareRepo()
    const b = branch(`file://${bare}`)
    for (const n of [1, 2, 3]) await addToBranch(b, await checkout(b), result(n), fast)
    const read = await checkout(b)
    expect(read.exists).toBe(true)
    expect(readdirSync(join(read.dir, 'checkout'))).toHaveLength(3)
    expect(git(read.dir, 'rev-parse', '--is-shallow-repository')).toBe('true')
    expect(git(read.dir, 'rev-list', '--count', 'HEAD')).toBe('1')
  })

  it('adding a result that is there already commits nothing', async () => {
    const bare = bareRepo()
    const b = branch(`file://${bare}`)
    await addToBranch(b, await checkout(b), result(1), fast)
    const again = await addToBranch(b, await checkout(b), result(1), fast)
    expect(again).toEqual({ outcome: 'unchanged', attempts: 1 })
    expect(git(bare, 'rev-list', '--count', BRANCH)).toBe('1')
  })

  it('four writers at once lose no result: each rejected push is redone on the new tip', async () => {
    const bare = bareRepo()
    const b = branch(`file://${bare}`)
    await addToBranch(b, await checkout(b), result(0), fast)
    // All four fetch the same tip before any of them pushes, then race.
    const checkouts = await Promise.all([1, 2, 3, 4].map(() => checkout(b)))
    const added = await Promise.all(checkouts.map((co, i) => addToBranch(b, co, result(i + 1), fast)))
    expect(added.map((a) => (a.outcome === 'failed' ? a.reason : a.outcome))).toEqual(['pushed', 'pushed', 'pushed', 'pushed'])
    expect(added.some((a) => a.attempts > 1)).toBe(true)
    expect(filesOn(bare)).toHaveLength(5)
    // A linear history: nothing merged, nothing overwritten.
    expect(git(bare, 'rev-list', '--count', BRANCH)).toBe('5')
    expect(git(bare, 'rev-list', '--merges', '--count', BRANCH)).toBe('0')
  })

  it('four writers racing to create the branch lose no result', async () => {
    const bare = bareRepo()
    const b = branch(`file://${bare}`)
    const checkouts = await Promise.all([1, 2, 3, 4].map(() => checkout(b)))
    expect(checkouts.every((c) => !c.exists)).toBe(true)
    const added = await Promise.all(checkouts.map((co, i) => addToBranch(b, co, result(i + 1), fast)))
    expect(added.map((a) => (a.outcome === 'failed' ? a.reason : a.outcome))).toEqual(['pushed', 'pushed', 'pushed', 'pushed'])
    expect(filesOn(bare)).toHaveLength(4)
    expect(git(bare, 'rev-list', '--max-parents=0', '--count', BRANCH)).toBe('1')
  })

  it('gives up after the tries it is given, saying so', async () => {
    const bare = bareRepo()
    const b = branch(`file://${bare}`)
    await addToBranch(b, await checkout(b), result(0), fast)
    let n = 10
    // Another run pushes between this writer's fetch and each of its pushes.
    const beaten = {
      add: async (dir: string) => {
        await result(1).add(dir)
        await addToBranch(b, await checkout(b), result(n++), fast)
      },
      message: 'loadgate: result 1'
    }
    const added = await addToBranch(b, await checkout(b), beaten, { ...fast, attempts: 3 })
    expect(added).toEqual({ outcome: 'failed', attempts: 3, reason: `cannot push to ${BRANCH} (the push was still rejected after 3 tries, as other runs pushed first)` })
    expect(filesOn(bare)).toHaveLength(4)
  })

  it('tells a lost race from a refusal', () => {
    expect(lostRace('To x\n ! [rejected]        HEAD -> b (fetch first)')).toBe(true)
    expect(lostRace('!\tHEAD:refs/heads/b\t[remote rejected] (failed to update ref)')).toBe(true)
    expect(lostRace("!\tHEAD:refs/heads/b\t[remote rejected] (cannot lock ref 'refs/heads/b': is at 1 but expected 2)")).toBe(true)
    expect(lostRace('!\tHEAD:refs/heads/b\t[remote rejected] (protected branch hook declined)')).toBe(false)
    expect(lostRace("remote: Permission to octo/shop.git denied to github-actions[bot].\nfatal: unable to access 'https://github.com/octo/shop.git/': The requested URL returned error: 403")).toBe(false)
  })

  it('a branch that cannot be read is reported, not thrown', async () => {
    const got = await fetchBranch(branch(`file://${join(tmpdir(), 'no-such-repo.git')}`), mkdtempSync(join(tmpdir(), 'loadgate-runner-temp-')))
    expect(got).toMatchObject({ failed: expect.stringContaining('cannot reach') })
  })
})

describe('the data branch over HTTP with the token', () => {
  const TOKEN = 'ghs_datatoken0123456789'
  let server: GitHttp
  beforeAll(async () => {
    server = new GitHttp(mkdtempSync(join(tmpdir(), 'loadgate-githttp-')), TOKEN)
    await server.start()
  })
  afterAll(async () => server.stop())

  it('sends the token as the header only, and writes it into no file and no message', async () => {
    const bare = server.bare('octo', 'shop')
    seedMain(bare)
    const b = branch(`${server.url}/octo/shop.git`, TOKEN)
    const co = await checkout(b)
    expect(co.exists).toBe(false)
    expect(await addToBranch(b, co, result(1), fast)).toMatchObject({ outcome: 'pushed' })
    const read = await checkout(b)
    expect(readdirSync(join(read.dir, 'checkout'))).toHaveLength(1)

    // Every push request carried the header (the server answers 401 to any without).
    const pushes = server.seen.filter((s) => s.url.includes('git-receive-pack'))
    expect(pushes.length).toBeGreaterThan(0)
    const basic = Buffer.from(`x-access-token:${TOKEN}`).toString('base64')
    expect(new Set(pushes.map((s) => s.authorization?.replace(/^basic /i, 'Basic ')))).toEqual(new Set([`Basic ${basic}`]))
    const secret = authHeader(TOKEN).split(' ').pop()!
    for (const dir of [co.dir, read.dir]) {
      for (const file of ['config', 'FETCH_HEAD']) {
        const path = join(dir, '.git', file)
        if (!existsSync(path)) continue
        const text = readFileSync(path, 'utf8')
        expect(text).not.toContain(TOKEN)
        expect(text).not.toContain(secret)
      }
      expect(git(dir, 'config', '--list', '--show-origin')).not.toMatch(/extraheader/i)
    }
  })

  it('a wrong token fails with git\'s words, the token masked, and is not retried', async () => {
    const bare = server.bare('octo', 'denied')
    seedMain(bare)
    const wrong = 'ghs_wrongtoken9876543210'
    const got = await fetchBranch(branch(`${server.url}/octo/denied.git`, wrong), mkdtempSync(join(tmpdir(), 'loadgate-runner-temp-')))
    expect(got).toMatchObject({ failed: expect.stringMatching(/cannot reach .*(401|Authentication failed|could not read Username)/) })
    expect(JSON.stringify(got)).not.toContain(wrong)
  })

  it('the header is for the remote\'s server only, after any entries the environment has', () => {
    const env = gitEnv({ remote: 'https://github.com/octo/shop.git', token: 'ghs_x', env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.quotepath', GIT_CONFIG_VALUE_0: 'false' } })
    expect(env).toMatchObject({
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'core.quotepath',
      GIT_CONFIG_KEY_1: 'http.https://github.com/.extraheader',
      GIT_CONFIG_VALUE_1: `AUTHORIZATION: basic ${Buffer.from('x-access-token:ghs_x').toString('base64')}`,
      GIT_TERMINAL_PROMPT: '0'
    })
    expect(gitEnv({ remote: 'file:///tmp/shop.git', token: 'ghs_x', env: {} }).GIT_CONFIG_COUNT).toBeUndefined()
  })
})

describe('recording a run\'s result', () => {
  const ctx = (eventName: string, refName = 'main'): RunContext => ({
    eventName,
    owner: 'octo',
    repo: 'shop',
    runId: 77,
    refName,
    defaultBranch: 'main',
    sha: 'c'.repeat(40),
    serverUrl: 'https://github.com',
    workflowFile: 'perf.yml',
    workflowName: 'perf',
    job: 'gate',
    runUrl: 'https://github.com/octo/shop/actions/runs/77',
    actionRepository: '',
    pullRequest: eventName === 'pull_request' ? { number: 7, baseRef: 'main', fromFork: false } : undefined
  })
  /** An engine that records its arguments and files the result as `history add` does. */
  function engine(calls: string[][]) {
    return async (args: string[]) => {
      calls.push(args)
      await result(calls.length).add(args[2])
    }
  }

  it('a push to main adds with the branch, the commit and its page; a pull request adds nothing', async () => {
    const bare = bareRepo()
    const b = branch(`file://${bare}`)
    const calls: string[][] = []
    const pushed = await recordResult(b, await checkout(b), { ctx: ctx('push'), resultPath: '/r/result.json', invalid: false, engine: engine(calls) })
    expect(pushed.note).toMatch(/^\nAdded to the history branch `loadgate-history` \(commit [0-9a-f]{7}\)\.$/)
    expect(calls).toEqual([
      ['history', 'add', expect.stringMatching(/history-branch-/), '/r/result.json', '--branch', 'main', '--commit', 'c'.repeat(40), '--commit-url', `https://github.com/octo/shop/commit/${'c'.repeat(40)}`]
    ])
    expect(git(bare, 'log', '-1', '--format=%s', BRANCH)).toBe(`loadgate: a result of ${'c'.repeat(12)} (push, run 77)`)

    const read = await checkout(b)
    const pr = await recordResult(b, read, { ctx: ctx('pull_request', '7/merge'), resultPath: '/r/result.json', invalid: false, engine: engine(calls) })
    expect(pr).toEqual({ note: '', dir: read.dir })
    expect(calls).toHaveLength(1)
    expect(filesOn(bare)).toHaveLength(1)
  })

  it('an invalid measurement is not added, and the note says so', async () => {
    const bare = bareRepo()
    const b = branch(`file://${bare}`)
    const calls: string[][] = []
    const got = await recordResult(b, await checkout(b), { ctx: ctx('schedule'), resultPath: '/r/result.json', invalid: true, engine: engine(calls) })
    expect(got.note).toBe('\nNot added to the history branch `loadgate-history`: the measurement is invalid.')
    expect(calls).toEqual([])
    expect(git(bare, 'branch', '--list', BRANCH)).toBe('')
  })

  it('a push the server refuses (a hook, a protected branch) is not retried: a warning, and the run goes on', async () => {
    const bare = bareRepo()
    writeFileSync(join(bare, 'hooks', 'pre-receive'), '#!/bin/sh\necho "protected branch"\nexit 1\n', { mode: 0o755 })
    const b = branch(`file://${bare}`)
    const calls: string[][] = []
    const got = await recordResult(b, await checkout(b), { ctx: ctx('workflow_dispatch', 'release'), resultPath: '/r/result.json', invalid: false, engine: engine(calls) })
    expect(got.note).toBe('\nNot added to the history branch `loadgate-history` (see the warning in the log).')
    expect(calls).toHaveLength(1)
    const co = await checkout(b)
    expect(await addToBranch(b, co, result(5), fast)).toEqual({
      outcome: 'failed',
      attempts: 1,
      reason: `cannot push to ${BRANCH} (HEAD:refs/heads/${BRANCH} [remote rejected] (pre-receive hook declined))`
    })
  })
})

describe('the newest stored result', () => {
  it('of the spec and branch, valid, by start time; dot folders and other files passed over', () => {
    const dir = mkdtempSync(join(tmpdir(), 'loadgate-stored-'))
    const put = (path: string, r: object | string) => {
      mkdirSync(join(dir, path, '..'), { recursive: true })
      writeFileSync(join(dir, path), typeof r === 'string' ? r : JSON.stringify(r))
    }
    const res = (name: string, branch: string, at: string, valid = true) => ({ spec: { name }, source: { branch, commit: `${at.slice(11, 13)}`.padEnd(40, 'e') }, started_at: at, health: { valid } })
    put('api/a.json', res('api', 'main', '2026-11-20T01:00:00.000000Z'))
    put('api/b.json', res('api', 'main', '2026-11-21T02:00:00.000000Z'))
    put('api/c.json', res('api', 'main', '2026-11-22T03:00:00.000000Z', false))
    put('api/d.json', res('api', 'feature', '2026-11-23T04:00:00.000000Z'))
    put('other/e.json', res('other', 'main', '2026-11-24T05:00:00.000000Z'))
    put('.git/f.json', res('api', 'main', '2026-11-25T06:00:00.000000Z'))
    put('api/broken.json', '{ not json')
    put('README.md', '# not a result')
    expect(newestResult(dir, 'api', 'main')).toEqual({ path: join(dir, 'api', 'b.json'), startedAt: '2026-11-21T02:00:00.000000Z', commit: '02'.padEnd(40, 'e') })
    expect(newestResult(dir, 'api', 'release')).toBeUndefined()
    expect(newestResult(dir, undefined, 'main')).toBeUndefined()
  })
})

describe('which runs write', () => {
  const ctx = (eventName: string, refName = 'main', pr = false) => ({
    eventName,
    refName,
    defaultBranch: 'main',
    pullRequest: pr ? { number: 7, baseRef: 'main', fromFork: false } : undefined
  })
  it.each([
    ['push', 'main', false, true],
    ['push', 'feature', false, false],
    ['schedule', 'main', false, true],
    ['workflow_dispatch', 'release', false, true],
    ['pull_request', '7/merge', true, false],
    ['pull_request_target', 'main', true, false],
    // A pull_request_target payload always has the pull request; the name alone refuses too.
    ['pull_request_target', 'main', false, false],
    ['merge_group', 'main', false, false]
  ])('%s on %s (pull request %s): %s', (event, ref, pr, writes) => {
    expect(writesHistory(ctx(event, ref, pr))).toBe(writes)
  })
})
