/**
 * mode: paired, run as the runner runs the bundled action: a real git repository whose base
 * and head commits each hold their own server script (the engine's `loadgate serve` behind it),
 * cloned as actions/checkout would, the real engine running `loadgate ab` on both checkouts,
 * and the local stand-in for GitHub.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { LoadgateVerdict } from '../../src/generated/verdict.js'
import { checkout, git, origin, type Origin } from '../fixtures/git.js'
import { StandIn } from './standin.js'
import { engineIn, runAction, TOKEN, zipEntries, type ActionRun } from './harness.js'


/**
 * Each side's service is its checkout's `bin/server`, which only `build` makes (from
 * `server.sh`); the script notes which commit's copy started, then runs the engine's built-in
 * target on the side's port. 4 s of load: 16 epochs of 250 ms, enough for a paired verdict.
 */
const SPEC = `version: 1
name: paired
service:
  command: ["\${ROOT}/bin/server", "\${LOADGATE}", "127.0.0.1:\${PORT}"]
  ready_url: http://127.0.0.1:\${PORT}/health
  ready_timeout: 10s
defaults:
  base_url: http://127.0.0.1:\${PORT}
  timeout: 2s
targets:
  - name: home
    path: /?size=256&delay=1ms
load:
  connections: 2
  duration: 4s
slo:
  latency: ["p(95) < 1s"]
# Loose rules: both sides share a small, shared test machine.
regression:
  latency: ["p(95) +100% floor 10ms"]
  errors: ["rate +10% floor 1%"]
  requests: []
`

function server(commit: string) {
  return { text: `#!/bin/sh\necho "${commit} $0" >> "$SERVERS_LOG"\nexec "$1" serve --listen "$2" --threads 1\n`, mode: 0o755 }
}

/** Makes the side's server, and notes the environment `build` got (beside the servers' log). */
const BUILD = 'mkdir -p bin && cp server.sh bin/server && env >> "$SERVERS_LOG.build-env"'
const MARK = '<!-- loadgate-comment: perf.yml/gate/loadgate -->'

let api: StandIn
let repo: Origin

beforeAll(async () => {
  api = new StandIn()
  await api.start()
  repo = origin({
    base: { 'perf/paired.yaml': SPEC, 'server.sh': server('base') },
    head: { 'server.sh': server('head'), 'HEAD-ONLY.md': 'a file the base does not have\n' }
  })
})

afterAll(async () => {
  await api?.stop()
})

/** Where the server scripts note which copy started. */
const serversLog = () => join(mkdtempSync(join(tmpdir(), 'loadgate-servers-')), 'servers.log')

function run(ws: string, runId: number, pr: number, inputs: Record<string, string>, o: { baseRef?: string; log?: string } = {}): Promise<ActionRun> {
  return runAction({
    api: api.url,
    workspace: ws,
    event: { name: 'pull_request', runId, pr, baseRef: o.baseRef ?? 'main' },
    inputs: { 'engine-path': engineIn(ws), spec: 'perf/paired.yaml', mode: 'paired', build: BUILD, ...inputs },
    env: { SERVERS_LOG: o.log ?? serversLog() }
  })
}

/** The base worktree's folder, as the log names it. */
function worktreeOf(r: ActionRun): string {
  const m = r.stdout.match(/Checked out the baseline [0-9a-f]{7} into (\S+)/)
  expect(m, r.stdout).not.toBeNull()
  return m![1]
}

describe('mode: paired', () => {
  it('builds the base and the head, loads both at once, and reports, comments and uploads as stored mode does', async () => {
    const ws = checkout(repo)
    const from = api.requests.length
    const log = serversLog()
    const r = await run(ws, 400, 20, {}, { log })
    expect(r.code, r.stdout).toBe(0)

    const short = { base: repo.commits.base.slice(0, 7), head: repo.commits.head.slice(0, 7) }
    const worktree = worktreeOf(r)
    // Each side's service is the script of its own commit, built by `build` in its own checkout.
    const servers = readFileSync(log, 'utf8')
    expect(servers.split('\n').filter(Boolean).sort()).toEqual([`base ${worktree}/bin/server`, `head ${ws}/bin/server`])
    expect(r.stdout).toContain(`::group::Build the candidate (${short.head}) in ${ws}`)
    expect(r.stdout).toContain(`::group::Build the baseline (${short.base}) in ${worktree}`)
    expect(r.stdout).toContain('::group::loadgate ab perf/paired.yaml')
    // `build`, the pull request's code, ran twice without the token, the inputs or ACTIONS_*.
    const built = readFileSync(`${log}.build-env`, 'utf8')
    expect(built.match(/^PWD=/gm)).toHaveLength(2)
    expect(built).not.toMatch(/^(INPUT_|ACTIONS_|GITHUB_TOKEN=|GITHUB_ENV=|GITHUB_OUTPUT=)/m)
    expect(built).not.toContain(TOKEN)
    // The worktree is gone, and git knows it.
    expect(existsSync(worktree)).toBe(false)
    expect(git(ws, 'worktree', 'list').split('\n')).toHaveLength(1)

    // The reports are the engine's, of the ab document: the base's side is the baseline.
    expect(r.outputs.result).toMatch(/\/ab\.json$/)
    const ab = JSON.parse(readFileSync(r.outputs.result, 'utf8'))
    expect(ab.ab_version).toBeGreaterThanOrEqual(1)
    expect(ab.baseline.spec.name).toBe('paired')
    const verdict: LoadgateVerdict = JSON.parse(readFileSync(join(dirname(r.outputs.result), 'verdict.json'), 'utf8'))
    expect(verdict.baseline).toBeTruthy()
    expect(verdict.rules.length).toBeGreaterThan(0)
    expect(r.outputs.verdict).toBe('pass')
    expect(['unchanged', 'improved', 'inconclusive']).toContain(r.outputs.regression)
    expect(Number(r.outputs['p95-us'])).toBeGreaterThan(1000) // the target waits 1 ms
    const note = `Paired run: this commit (${short.head}) against ${short.base}, its merge base with main, both built and loaded at the same time on this runner.`
    expect(r.summary).toContain(`> ${note}`)
    expect(r.summary).toContain(readFileSync(r.outputs['report-markdown'], 'utf8'))

    // No baseline is looked up: the only REST calls are the comment's.
    const rest = api.calls(from).filter((c) => !c.includes('/twirp/') && !c.startsWith('PUT /devstoreaccount1/'))
    expect(rest).toEqual(['GET /repos/octo/shop/issues/20/comments', 'POST /repos/octo/shop/issues/20/comments'])
    const ours = (api.comments.get(20) ?? []).filter((c) => c.body.startsWith(MARK))
    expect(ours).toHaveLength(1)
    expect(ours[0].body).toContain(note)
    const zip = api.artifacts.find((a) => a.runId === 400 && a.name === 'loadgate')!.zip
    expect(zipEntries(zip).sort()).toEqual(['ab.json', 'comment.md', 'pull-request.json', 'report.html', 'report.junit.xml', 'report.md', 'verdict.json'])
  }, 60_000)

  it('deepens a shallow checkout to find the base, and stops at a build that fails there, removing the worktree', async () => {
    const ws = checkout(repo, 1)
    const r = await run(ws, 401, 21, { build: `test -f HEAD-ONLY.md && ${BUILD}` })
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('Fetching main from origin, and the history this shallow checkout lacks (--unshallow)')
    expect(r.errors.join('\n')).toContain(`input \`build\` failed for the baseline (${repo.commits.base.slice(0, 7)}) with exit code 1`)
    expect(r.stdout).not.toContain('::group::loadgate ab')
    expect(existsSync(worktreeOf(r))).toBe(false)
    expect(git(ws, 'worktree', 'list').split('\n')).toHaveLength(1)
    expect(r.outputs).toEqual({})
  })

  it('says what to do when the base branch cannot be fetched', async () => {
    const ws = checkout(repo, 1)
    const r = await run(ws, 402, 22, {}, { baseRef: 'release-9' })
    expect(r.code).toBe(1)
    expect(r.errors.join('\n')).toMatch(
      /mode: paired: cannot fetch the base branch release-9 from origin \(git says: .*\); check out with actions\/checkout's `fetch-depth: 0`/
    )
    expect(r.stdout).not.toContain('Engine:') // it stops before getting the engine
  })
})
