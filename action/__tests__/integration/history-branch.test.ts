/**
 * `history-branch`: the bundled action, run as the runner runs it, with the real engine
 * (`loadgate history add`), against a stand-in for GitHub's API and, for git, a bare repository
 * served over HTTP by `git http-backend` that refuses any request without the token's header
 * (GITHUB_SERVER_URL points at it: `serverUrl`). The tests run in order, like the history of one repository.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { StandIn } from './standin.js'
import { engineIn, freePort, runAction, spec, TOKEN, type ActionRun, type Event } from './harness.js'
import { GitHttp } from '../fixtures/githttp.js'
import { git } from '../fixtures/git.js'
import { authHeader } from '../../src/databranch.js'

const BRANCH = 'loadgate-history'

let api: StandIn
let server: GitHttp
let bare: string
let ws: string
let wsConfig: string

beforeAll(async () => {
  api = new StandIn()
  await api.start()
  server = new GitHttp(mkdtempSync(join(tmpdir(), 'loadgate-githttp-')), TOKEN)
  await server.start()
  bare = server.bare('octo', 'shop')
  // The workspace is the user's checkout: a git repository whose config must stay as it was.
  ws = mkdtempSync(join(tmpdir(), 'loadgate-action-ws-'))
  mkdirSync(join(ws, 'perf'))
  writeFileSync(join(ws, 'perf', 'fast.yaml'), spec({ delay: '1ms', slo: 'p(95) < 1s', duration: '2s' }))
  git(ws, 'init', '-q', '-b', 'main')
  git(ws, 'add', '-A')
  git(ws, 'commit', '-q', '-m', 'code')
  git(ws, 'push', '-q', bare, 'main')
  wsConfig = readFileSync(join(ws, '.git', 'config'), 'utf8')
})

afterAll(async () => {
  await api?.stop()
  await server?.stop()
})

async function run(event: Event, inputs: Record<string, string> = {}): Promise<ActionRun> {
  return runAction({
    api: api.url,
    workspace: ws,
    event,
    inputs: { spec: 'perf/fast.yaml', 'engine-path': engineIn(ws), 'history-branch': BRANCH, ...inputs },
    env: { LG_PORT: String(await freePort()), GITHUB_SERVER_URL: serverUrl(), GITHUB_SHA: `${event.runId}`.padEnd(40, 'c') }
  })
}

/**
 * The git server as GITHUB_SERVER_URL: a `*.localhost` name (libcurl, git's HTTP client, takes it
 * for loopback), as @actions/artifact refuses to upload for any other server than github.com's,
 * GHE.com's or a `.localhost` one.
 */
function serverUrl(): string {
  return server.url.replace('127.0.0.1', 'git.localhost')
}

/** The result files on the data branch, by path. */
function onBranch(): string[] {
  return git(bare, 'ls-tree', '-r', '--name-only', BRANCH)
    .split('\n')
    .filter((f) => f.endsWith('.json'))
}

/** What the log shows, less the runner's `::add-mask::` commands (which the runner swallows). */
function log(r: ActionRun): string {
  return `${r.stdout}\n${r.stderr}`
    .split('\n')
    .filter((l) => !l.startsWith('::add-mask::'))
    .join('\n')
}

/** The secret never shows: not in the log, the summary, the outputs, nor any git config. */
function expectNoToken(r: ActionRun): void {
  const header = authHeader(TOKEN).split(' ').pop()!
  for (const text of [log(r), r.summary, JSON.stringify(r.outputs)]) {
    expect(text).not.toContain(TOKEN)
    expect(text).not.toContain(header)
  }
  // The runner is told to mask both.
  expect(r.stdout).toContain(`::add-mask::${TOKEN}`)
  expect(r.stdout).toContain(`::add-mask::${header}`)
  if (r.outputs['history-dir']) expect(readFileSync(join(r.outputs['history-dir'], '.git', 'config'), 'utf8')).not.toMatch(/extraheader|ghs_|basic/i)
  expect(readFileSync(join(ws, '.git', 'config'), 'utf8')).toBe(wsConfig)
}

describe('history-branch', () => {
  it('the first push to main creates the branch with its result', async () => {
    const r = await run({ name: 'push', runId: 300, branch: 'main' })
    api.addRun({ id: 300, event: 'push', head_branch: 'main' })
    expect(r.code, log(r)).toBe(0)
    expect(onBranch()).toHaveLength(1)
    const [file] = onBranch()
    expect(file).toMatch(/^[^/]+\/\d{8}T\d{6}\.\d{6}Z-300ccccccccc-[0-9a-f]{8}\.json$/)
    const stored = JSON.parse(git(bare, 'show', `${BRANCH}:${file}`))
    expect(stored.source).toMatchObject({ branch: 'main', commit: '300'.padEnd(40, 'c'), commit_url: `${serverUrl()}/octo/shop/commit/${'300'.padEnd(40, 'c')}` })
    expect(r.summary).toMatch(/Added to the history branch `loadgate-history` \(commit [0-9a-f]{7}\)/)
    expect(readdirSync(r.outputs['history-dir'])).toContain(file.split('/')[0])
    expect(r.outputs.engine).toBe(engineIn(ws))
    expectNoToken(r)
  })

  it('a second push appends its result', async () => {
    const r = await run({ name: 'push', runId: 301, branch: 'main' })
    api.addRun({ id: 301, event: 'push', head_branch: 'main' })
    expect(r.code, log(r)).toBe(0)
    expect(onBranch()).toHaveLength(2)
    expect(git(bare, 'rev-list', '--count', BRANCH)).toBe('2')
    expectNoToken(r)
  })

  it('a pull request reads the branch as the baseline history and pushes nothing', async () => {
    const pushesBefore = server.seen.filter((s) => s.url.includes('git-receive-pack')).length
    const r = await run({ name: 'pull_request', runId: 302, pr: 31, baseRef: 'main' })
    expect(r.code, log(r)).toBe(0)
    const dir = r.outputs['history-dir']
    expect(dir).toMatch(/history-branch-/)
    expect(log(r)).toContain(`Baseline history: the branch ${BRANCH} (${dir})`)
    // The engine was given the branch's folder (the runner echoes each command).
    expect(log(r)).toMatch(new RegExp(`loadgate report .* --baseline-history ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( |$)`, 'm'))
    expect(r.summary).toContain('Its history: the results on the branch `loadgate-history`.')
    expect(r.warnings).toEqual([])
    expect(r.summary).not.toContain('Added to the history branch')
    expect(server.seen.filter((s) => s.url.includes('git-receive-pack'))).toHaveLength(pushesBefore)
    expect(onBranch()).toHaveLength(2)
    expectNoToken(r)
  })

  it("a pull request whose branch does not exist falls back to the artifact's window, saying so", async () => {
    const r = await run({ name: 'pull_request', runId: 303, pr: 32, baseRef: 'main' }, { 'history-branch': 'no-such-history' })
    expect(r.code, log(r)).toBe(0)
    expect(log(r)).toContain('History branch no-such-history: not there yet')
    expect(log(r)).toContain("Baseline history: the baseline artifact's window history/, as the branch no-such-history does not exist yet")
    expect(log(r)).toMatch(/loadgate report .* --baseline-history \S+\/baseline\/history( |$)/m)
    expect(r.outputs['history-dir']).toBe('')
    expect(git(bare, 'branch', '--list', 'no-such-history')).toBe('')
  })

  it("once main's artifacts have expired, a pull request takes its baseline from the branch", async () => {
    for (const a of api.artifacts) a.expired = true
    const r = await run({ name: 'pull_request', runId: 304, pr: 33, baseRef: 'main' })
    expect(r.code, log(r)).toBe(0)
    const dir = r.outputs['history-dir']
    // The newest of the two pushes' results on the branch: run 301's commit.
    expect(r.summary).toContain(
      'Baseline: the newest result of main on the branch `loadgate-history` (301cccc), as the newest successful run of perf.yml on main with an artifact named `loadgate` was not found.'
    )
    expect(log(r)).toMatch(new RegExp(`loadgate report .* --baseline ${dir}/[^ ]+-301ccccccccc-[0-9a-f]{8}\\.json --baseline-history ${dir}( |$)`, 'm'))
    expect(r.outputs.regression).not.toBe('no-baseline')
    expect(r.warnings).toEqual([])
  })

  it('three scheduled runs at once each add their result', async () => {
    const runs = await Promise.all([305, 306, 307].map((id) => run({ name: 'schedule', runId: id, branch: 'main' })))
    for (const r of runs) {
      expect(r.code, log(r)).toBe(0)
      expect(r.summary).toMatch(/Added to the history branch `loadgate-history`/)
      expectNoToken(r)
    }
    expect(onBranch()).toHaveLength(5)
    expect(git(bare, 'rev-list', '--merges', '--count', BRANCH)).toBe('0')
  })
})
