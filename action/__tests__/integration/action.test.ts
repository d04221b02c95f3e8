/**
 * The bundled action, run as the runner runs it, against a local stand-in for GitHub that
 * records requests, with the real loadgate engine loading its real built-in target.
 *
 * The tests in the first block share one stand-in and run in order, like the history of one
 * repository: a push to main makes the baseline, pull requests compare with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { releaseTargets, runtimeGlibc } from '../../src/engine.js'
import type { LoadgateVerdict } from '../../src/generated/verdict.js'
import { StandIn } from './standin.js'
import { ACTION_ROOT, engineBinary, engineHasReport, engineIn, freePort, runAction, spec, zipEntries, type ActionRun, type Event } from './harness.js'

const bin = engineBinary()
if (!(await engineHasReport(bin))) {
  throw new Error(`the engine at ${bin} has no \`report\` command, which the action calls: build this checkout's engine`)
}

const MARK = '<!-- loadgate-comment: perf.yml/gate/loadgate -->'

let api: StandIn
let ws: string
let port: number

beforeAll(async () => {
  api = new StandIn()
  await api.start()
  ws = mkdtempSync(join(tmpdir(), 'loadgate-action-ws-'))
  mkdirSync(join(ws, 'perf'))
  writeFileSync(join(ws, 'perf', 'fast.yaml'), spec({ delay: '1ms', slo: 'p(95) < 1s' }))
  writeFileSync(join(ws, 'perf', 'strict.yaml'), spec({ delay: '5ms', slo: 'p(95) < 1ms', duration: '2s' }))
  writeFileSync(join(ws, 'perf', 'slow.yaml'), spec({ delay: '40ms', slo: 'p(95) < 1s' }))
  writeFileSync(join(ws, 'perf', 'renamed.yaml'), spec({ name: 'renamed', delay: '1ms', slo: 'p(95) < 1s', duration: '2s' }))
  writeFileSync(join(ws, 'perf', 'invalid.yaml'), 'version: 1\nname: broken\ntargets: []\nload:\n  connections: 0\n')
  port = await freePort()
})

afterAll(async () => {
  await api?.stop()
})

function run(event: Event, inputs: Record<string, string>, more: { env?: Record<string, string>; toolCache?: string } = {}): Promise<ActionRun> {
  return runAction({
    api: api.url,
    workspace: ws,
    event,
    inputs: { 'engine-path': engineIn(ws), ...inputs },
    env: { LG_PORT: String(port), ...more.env },
    toolCache: more.toolCache
  })
}

/** The engine's verdict document the action read (it lies next to the result). */
function verdictOf(r: ActionRun): LoadgateVerdict {
  return JSON.parse(readFileSync(join(dirname(r.outputs.result), 'verdict.json'), 'utf8'))
}

function ourComments(pr: number) {
  return (api.comments.get(pr) ?? []).filter((c) => c.body.startsWith(MARK))
}

describe('a repository history: baseline on main, pull requests compared with it', () => {
  it('a push to main is not compared; its result is uploaded as the next baseline', async () => {
    const from = api.requests.length
    const r = await run({ name: 'push', runId: 100, branch: 'main' }, { spec: 'perf/fast.yaml' })
    // The run is now in the repository's history, whatever the assertions below find.
    api.addRun({ id: 100, event: 'push', head_branch: 'main' })
    expect(r.code, r.stdout).toBe(0)
    expect(r.outputs).toMatchObject({ verdict: 'pass', slo: 'pass', regression: 'no-baseline', 'comment-url': '' })
    expect(Number(r.outputs.rps)).toBeGreaterThan(0)
    expect(Number(r.outputs['p95-us'])).toBeGreaterThan(1000) // the target waits 1ms
    expect(Number(r.outputs['p99-us'])).toBeGreaterThanOrEqual(Number(r.outputs['p95-us']))
    expect(r.outputs['error-rate']).toBe('0')
    // The numbers are the engine's, unformatted: its verdict document's headline.
    const v = verdictOf(r)
    expect(v.baseline ?? null).toBeNull()
    expect(r.outputs).toMatchObject({
      rps: String(v.current.headline.rps),
      'p95-us': String(v.current.headline.p95_us),
      'p99-us': String(v.current.headline.p99_us)
    })
    expect(readFileSync(r.outputs.result, 'utf8')).toMatch(/"result_version":\s*\d+/) // compact or pretty
    const html = readFileSync(r.outputs['report-html'], 'utf8')
    expect(html).toMatch(/^<!doctype html>/i)
    expect(html).toContain('<svg') // the engine's charts
    expect(r.summary).toContain('Not compared with a baseline: a `push` event is not compared; this result becomes the baseline for pull requests into main.')
    expect(r.summary).toContain(readFileSync(r.outputs['report-markdown'], 'utf8'))
    expect(r.stdout).toContain('::group::loadgate run perf/fast.yaml')
    expect(r.stdout).toContain(`Engine: the prebuilt binary at ${engineIn(ws)} (input engine-path)`)
    // One REST call on a push: the previous run on main, whose history window it would carry
    // on (there is none yet); then the artifact upload (twirp, blob PUTs, finalize).
    const calls = api.calls(from)
    expect(calls[0]).toBe('GET /repos/octo/shop/actions/workflows/perf.yml/runs')
    expect(calls[1]).toBe('POST /twirp/github.actions.results.api.v1.ArtifactService/CreateArtifact')
    expect(calls.at(-1)).toBe('POST /twirp/github.actions.results.api.v1.ArtifactService/FinalizeArtifact')
    expect(calls.filter((c) => !c.includes('/twirp/') && !c.startsWith('PUT /devstoreaccount1/'))).toEqual([calls[0]])
    // The artifact, and the HTML report on its own (not zipped), which the links open.
    expect(api.artifacts.map((a) => [a.name, a.runId])).toEqual([
      ['loadgate.html', 100],
      ['loadgate', 100]
    ])
    expect(api.artifacts[0].zip.toString()).toMatch(/^<!doctype html>/i)
    expect(zipEntries(api.artifacts[1].zip)).toContain('history/run-100.json')
  })

  it('a pull request is compared with that run and gets one comment', async () => {
    const from = api.requests.length
    const r = await run({ name: 'pull_request', runId: 101, pr: 7, baseRef: 'main' }, { spec: 'perf/fast.yaml' })
    expect(r.code, r.stdout).toBe(0)
    const base = api.artifacts.find((a) => a.runId === 100 && a.name === 'loadgate')!.id
    expect(api.calls(from)).toEqual(
      expect.arrayContaining([
        'GET /repos/octo/shop/actions/workflows/perf.yml/runs',
        'GET /repos/octo/shop/actions/runs/100/artifacts',
        `GET /repos/octo/shop/actions/artifacts/${base}/zip`,
        `GET /artifact-blobs/${base}.zip`,
        'GET /repos/octo/shop/issues/7/comments',
        'POST /repos/octo/shop/issues/7/comments'
      ])
    )
    const runsQuery = api.requests.slice(from).find((q) => q.url.includes('/workflows/perf.yml/runs'))!.url
    expect(runsQuery).toContain('branch=main')
    expect(runsQuery).toContain('status=success')
    expect(r.summary).toContain('Baseline: [run #100](https://github.com/octo/shop/actions/runs/100) (push, 100aaaa)')
    expect(r.outputs.regression).not.toBe('no-baseline')
    expect(r.outputs.regression).not.toBe('regressed')
    const ours = ourComments(7)
    expect(ours).toHaveLength(1)
    expect(ours[0].body).toContain('Baseline: [run #100]')
    expect(r.outputs['comment-url']).toBe(`https://github.com/octo/shop/pull/7#issuecomment-${ours[0].id}`)
    // The comment leads to the run, its artifact and its HTML report (an artifact of its own).
    const run101 = 'https://github.com/octo/shop/actions/runs/101'
    const [page, pr] = ['loadgate.html', 'loadgate'].map((name) => api.artifacts.find((a) => a.runId === 101 && a.name === name)!)
    expect(ours[0].body).toContain(
      `[Workflow run](${run101}) · [Artifact \`loadgate\`](${run101}/artifacts/${pr.id}) · [HTML report](${run101}/artifacts/${page.id})`
    )
    // The job summary, written before the uploads, leads to the run's artifacts.
    expect(r.summary).toContain(`[Workflow run](${run101}) · [Artifact \`loadgate\`](${run101}#artifacts) · [HTML report](${run101}#artifacts)`)
    // The artifact of a pull request carries what a trusted workflow_run workflow needs.
    expect(zipEntries(pr.zip).sort()).toEqual(
      ['comment.md', 'pull-request.json', 'report.html', 'report.junit.xml', 'report.md', 'result.json', 'verdict.json'].sort()
    )
    // The engine's JUnit report: one test case per SLO threshold and regression rule.
    const junit = readFileSync(r.outputs['report-junit'], 'utf8')
    expect(junit).toMatch(/^<\?xml /)
    expect(junit).toContain('<testcase classname="loadgate.slo.total" name="total latency: p(95) &lt; 1s"')
    // The spec, relative to the workspace, is each case's file (test-report actions annotate it).
    expect(junit).toContain('file="perf&#x2f;fast.yaml"')
  })

  it('the same pull request again updates that comment instead of adding one', async () => {
    const before = ourComments(7)[0]
    const from = api.requests.length
    const r = await run({ name: 'pull_request', runId: 102, pr: 7, baseRef: 'main' }, { spec: 'perf/fast.yaml' })
    expect(r.code, r.stdout).toBe(0)
    const calls = api.calls(from)
    expect(calls).toContain(`PATCH /repos/octo/shop/issues/comments/${before.id}`)
    expect(calls).not.toContain('POST /repos/octo/shop/issues/7/comments')
    expect(ourComments(7)).toHaveLength(1)
    expect(r.stdout).toContain('Pull request comment: updated')
  })

  it('an SLO failure fails the step, annotates the threshold and updates the comment', async () => {
    const r = await run({ name: 'pull_request', runId: 103, pr: 7, baseRef: 'main' }, { spec: 'perf/strict.yaml' })
    expect(r.code).toBe(1)
    expect(r.outputs).toMatchObject({ verdict: 'fail', slo: 'fail' })
    // The annotation shows the engine's formatted numbers, as its verdict document has them.
    const failed = verdictOf(r).slo.filter((s) => !s.passed)
    expect(failed.map((s) => s.threshold)).toEqual(['p(95) < 1ms'])
    const { measured_text, limit_text } = failed[0]
    expect(typeof measured_text, 'the engine writes slo[].measured_text').toBe('string')
    expect(typeof limit_text, 'the engine writes slo[].limit_text').toBe('string')
    expect(r.errors).toEqual([
      // `:` in a property is escaped as %3A by the workflow command syntax
      // At the threshold's line in the spec: `latency: ["p(95) < 1ms"]` is line 17.
      `::error title=loadgate SLO failed%3A latency p(95) < 1ms,file=perf/strict.yaml,line=17::total: p(95) < 1ms failed, measured ${measured_text} (limit ${limit_text})`,
      '::error::loadgate: 1 SLO threshold failed (fail-on: slo, regression, invalid-measurement)'
    ])
    const display = verdictOf(r).current.headline.display
    expect(display, 'the engine writes current.headline.display').toBeDefined()
    expect(r.stdout).toContain(`integration: rps ${display.rps}, p50 ${display.p50}, p95 ${display.p95}, p99 ${display.p99}`)
    expect(ourComments(7)).toHaveLength(1)
    expect(ourComments(7)[0].body).toContain('p(95) &lt; 1ms') // the engine escapes its Markdown
  })

  it('fail-on: regression lets an SLO failure pass the step', async () => {
    const r = await run(
      { name: 'pull_request', runId: 104, pr: 7, baseRef: 'main' },
      { spec: 'perf/strict.yaml', 'fail-on': 'regression', comment: 'never' }
    )
    expect(r.code, r.stdout).toBe(0)
    expect(r.outputs).toMatchObject({ verdict: 'fail', slo: 'fail' })
    expect(r.stdout).toMatch(/the step passes \(fail-on: regression\)/)
  })

  it("one earlier result on main is too little history to judge: the rules are inconclusive, which does not fail the step", async () => {
    const r = await run({ name: 'pull_request', runId: 105, pr: 7, baseRef: 'main' }, { spec: 'perf/slow.yaml' })
    expect(r.code, r.stdout).toBe(0)
    // 40 ms against 1 ms, yet one result of main says nothing of how much main's runs vary.
    expect(r.outputs).toMatchObject({ slo: 'pass', regression: 'inconclusive', verdict: 'pass' })
    expect(verdictOf(r).rules.map((rule) => rule.verdict)).toEqual(['inconclusive', 'inconclusive'])
    expect(ourComments(7)[0].body).toMatch(/1 of 5 comparable results since the last change point \(runner type .+\): 4 more needed/)
  })

  it('a baseline of another spec (renamed in the pull request) is not compared, and that is not a failure', async () => {
    const r = await run({ name: 'pull_request', runId: 112, pr: 12, baseRef: 'main' }, { spec: 'perf/renamed.yaml' })
    expect(r.code, r.stdout).toBe(0)
    expect(r.outputs).toMatchObject({ verdict: 'pass', regression: 'no-baseline' })
    expect(r.warnings).toContainEqual(expect.stringMatching(/The baseline cannot be compared with this run: .*different specs/))
    expect(r.summary).toMatch(
      /Not compared: the baseline, \[run #100\]\(https:\/\/github.com\/octo\/shop\/actions\/runs\/100\) \(push, 100aaaa\), cannot be compared with this run \(the engine says: the results come from different specs/
    )
  })

  it('a pull request into a branch without runs has no baseline yet, which is not a failure', async () => {
    const r = await run({ name: 'pull_request', runId: 106, pr: 8, baseRef: 'release-2' }, { spec: 'perf/fast.yaml' })
    expect(r.code, r.stdout).toBe(0)
    expect(r.outputs).toMatchObject({ verdict: 'pass', regression: 'no-baseline' })
    expect(r.summary).toContain(
      'No baseline yet: the newest successful run of perf.yml on release-2 with an artifact named `loadgate` was not found, so this run is not compared (not a failure).'
    )
    expect(ourComments(8)).toHaveLength(1)
  })

  it('a pull request from a fork (403 on the comment) still passes and writes the summary', async () => {
    api.forbidCommentWrites = true
    try {
      const r = await run(
        { name: 'pull_request', runId: 107, pr: 9, baseRef: 'main', headRepo: 'eve/shop' },
        { spec: 'perf/fast.yaml' }
      )
      expect(r.code, r.stdout).toBe(0)
      expect(r.outputs.verdict).toBe('pass')
      expect(r.summary).toContain('Baseline: [run #100]')
      expect(r.warnings).toContainEqual(expect.stringMatching(/Could not comment on pull request #9 \(HTTP 403\): the token needs `pull-requests: write` \(a pull request from a fork gets a read-only token\)/))
      expect(api.comments.get(9) ?? []).toEqual([])
    } finally {
      api.forbidCommentWrites = false
    }
  })

  it('finds its comment on a later page among comments of others, and ignores look-alikes', async () => {
    const others = Array.from({ length: 130 }, (_, i) => ({
      id: 50_000 + i,
      body: i === 3 ? `> ${MARK}\nquoted by a reviewer` : `comment ${i}`,
      user: { login: 'bob', type: 'User' }
    }))
    // A user's comment that starts with the marker: not ours (the token cannot be bob: /user is 403).
    others[60] = { id: 50_060, body: `${MARK}\nforged`, user: { login: 'bob', type: 'User' } }
    others[120] = { id: 50_120, body: `${MARK}\nold report`, user: { login: 'github-actions[bot]', type: 'Bot' } }
    api.comments.set(10, others)
    const from = api.requests.length
    const r = await run({ name: 'pull_request', runId: 108, pr: 10, baseRef: 'main' }, { spec: 'perf/fast.yaml' })
    expect(r.code, r.stdout).toBe(0)
    const calls = api.calls(from)
    expect(calls.filter((c) => c === 'GET /repos/octo/shop/issues/10/comments')).toHaveLength(2)
    expect(calls).toContain('PATCH /repos/octo/shop/issues/comments/50120')
    expect(calls).not.toContain('POST /repos/octo/shop/issues/10/comments')
    expect(api.comments.get(10)![60].body).toBe(`${MARK}\nforged`)
    expect(api.comments.get(10)![120].body).toContain('Baseline: [run #100]')
  })

  it('comment: on-failure does not create a comment for a passing run', async () => {
    const from = api.requests.length
    const r = await run({ name: 'pull_request', runId: 109, pr: 11, baseRef: 'main' }, { spec: 'perf/fast.yaml', comment: 'on-failure' })
    expect(r.code, r.stdout).toBe(0)
    expect(api.calls(from)).not.toContain('POST /repos/octo/shop/issues/11/comments')
    expect(r.stdout).toContain('Pull request comment: skipped')
  })

  it("a schedule is compared with the previous scheduled run, not with pushes, and carries the branch's history window", async () => {
    api.addRun({ id: 90, event: 'schedule', head_branch: 'main' })
    let from = api.requests.length
    const first = await run({ name: 'schedule', runId: 110, branch: 'main' }, { spec: 'perf/fast.yaml' })
    expect(first.code, first.stdout).toBe(0)
    const q = api.requests.slice(from).find((x) => x.url.includes('/workflows/perf.yml/runs'))!.url
    expect(q).toContain('event=schedule')
    // Run 90 has no artifact: no baseline yet, said so; the push run 100 is not taken.
    expect(first.stdout).toContain('run #90 (https://github.com/octo/shop/actions/runs/90) has no unexpired artifact named loadgate')
    expect(first.outputs.regression).toBe('no-baseline')
    api.addRun({ id: 110, event: 'schedule', head_branch: 'main' })

    from = api.requests.length
    const second = await run({ name: 'schedule', runId: 111, branch: 'main' }, { spec: 'perf/fast.yaml' })
    expect(second.code, second.stdout).toBe(0)
    expect(second.summary).toContain('Baseline: [run #110](https://github.com/octo/shop/actions/runs/110) (schedule, 110aaaa), the previous successful scheduled run of perf.yml on main.')
    expect(api.calls(from)).not.toContain('GET /repos/octo/shop/actions/runs/100/artifacts')
    const zip = api.artifacts.find((a) => a.runId === 111 && a.name === 'loadgate')!.zip
    // One window per branch: the push's result, carried on by the first schedule, then this one.
    expect(zipEntries(zip)).toEqual(expect.arrayContaining(['history/run-100.json', 'history/run-110.json', 'history/run-111.json', 'result.json']))
    expect(second.stdout).toContain("History window: 3 result(s) kept in the artifact's history/")
    expect(second.summary).toContain('Trend over the last 3 runs') // the engine's report of the window
  })
})

describe("pushes to main build up the history window, and pull requests are judged against the history's level", () => {
  let repo: StandIn

  beforeAll(async () => {
    repo = new StandIn()
    await repo.start()
  })

  afterAll(async () => {
    await repo?.stop()
  })

  function on(event: Event): Promise<ActionRun> {
    return runAction({ api: repo.url, workspace: ws, event, inputs: { 'engine-path': engineIn(ws), spec: 'perf/fast.yaml' }, env: { LG_PORT: String(port) } })
  }

  async function push(runId: number): Promise<ActionRun> {
    const r = await on({ name: 'push', runId, branch: 'main' })
    repo.addRun({ id: runId, event: 'push', head_branch: 'main' })
    expect(r.code, r.stdout).toBe(0)
    return r
  }

  it('with 2 comparable results, every rule is inconclusive and says how many more are needed', async () => {
    await push(400)
    const second = await push(401)
    expect(second.stdout).toContain('History window carried on from run #400 (https://github.com/octo/shop/actions/runs/400), the previous successful run of perf.yml on main.')
    expect(zipEntries(repo.artifacts.find((a) => a.runId === 401 && a.name === 'loadgate')!.zip)).toEqual(expect.arrayContaining(['history/run-400.json', 'history/run-401.json']))

    const pr = await on({ name: 'pull_request', runId: 450, pr: 20, baseRef: 'main' })
    expect(pr.code, pr.stdout).toBe(0)
    expect(pr.summary).toContain('Baseline: [run #401]')
    expect(pr.stdout).toMatch(/--baseline \S+\/baseline\/result\.json --baseline-history \S+\/baseline\/history --format md/)
    expect(pr.summary).toMatch(/\(2 comparable result\(s\): this spec, runner type/)
    expect(pr.summary).toMatch(/2 of 5 comparable results since the last change point \(runner type .+\): 3 more needed/)
    // The pull request's artifact carries no window of its own.
    expect(zipEntries(repo.artifacts.find((a) => a.runId === 450 && a.name === 'loadgate')!.zip).filter((n) => n.startsWith('history/'))).toEqual([])
  })

  it('with 4, the note counts them and the rules need one more', async () => {
    await push(402)
    const last = await push(403)
    expect(last.stdout).toContain("History window: 4 result(s) kept in the artifact's history/")
    expect(last.summary).toContain('Trend over the last 4 runs')
    // Above the report, the branch's trend in one line: p95 and throughput over the window.
    expect(last.summary).toMatch(/\*\*Trend of `main`\*\*, last 4 runs: p95 `[▁-█]{4}` \(.+ → .+\) · throughput `[▁-█]{4}` \(.+ → .+\)/)

    const pr = await on({ name: 'pull_request', runId: 451, pr: 20, baseRef: 'main' })
    expect(pr.code, pr.stdout).toBe(0)
    expect(pr.summary).toContain('Baseline: [run #403]')
    // A pull request shows the base branch's trend, from the history its baseline carries.
    expect(pr.summary).toMatch(/\*\*Trend of `main`\*\*, last 4 runs: p95 `[▁-█]{4}`/)
    // Runs 400-402 and the baseline (403), whose own copy in its history the engine counts once.
    expect(pr.summary).toMatch(/\(4 comparable result\(s\): this spec, runner type/)
    expect(pr.summary).toMatch(/4 of 5 comparable results since the last change point \(runner type .+\): 1 more needed/)
    expect(pr.summary).not.toMatch(/assumes that the baseline's machine and this run's were alike/)
  })
})

describe("a regression against the level of main's history fails the step", () => {
  let repo: StandIn

  beforeAll(async () => {
    repo = new StandIn()
    await repo.start()
    // Main's history gives the level: each rule's whole-run value, so short runs serve.
    writeFileSync(join(ws, 'perf', 'level.yaml'), spec({ name: 'level', delay: '1ms', slo: 'p(95) < 1s', duration: '3s' }))
    writeFileSync(join(ws, 'perf', 'level-slow.yaml'), spec({ name: 'level', delay: '200ms', slo: 'p(95) < 1s', duration: '3s' }))
  })

  afterAll(async () => {
    await repo?.stop()
  })

  function on(event: Event, spec: string): Promise<ActionRun> {
    return runAction({ api: repo.url, workspace: ws, event, inputs: { 'engine-path': engineIn(ws), spec }, env: { LG_PORT: String(port) } })
  }

  it('after 6 pushes, the rule regresses, fails the step, and is annotated at its line in the spec', async () => {
    // Six pushes to main, each carrying the window on: more than the 5 results a level needs.
    for (const runId of [500, 502, 503, 504, 505, 506]) {
      const base = await on({ name: 'push', runId, branch: 'main' }, 'perf/level.yaml')
      expect(base.code, base.stdout).toBe(0)
      repo.addRun({ id: runId, event: 'push', head_branch: 'main' })
    }
    const r = await on({ name: 'pull_request', runId: 507, pr: 30, baseRef: 'main' }, 'perf/level-slow.yaml')
    expect(r.outputs).toMatchObject({ slo: 'pass', regression: 'regressed', verdict: 'fail' })
    expect(r.code).toBe(1)
    expect(r.summary).toMatch(/\(6 comparable result\(s\): this spec, runner type/)
    expect(r.errors).toContainEqual(expect.stringMatching(/a regression against the baseline was found/))
    // Annotated at the rule's line in the spec, with the engine's reason.
    const line = readFileSync(join(ws, 'perf', 'level-slow.yaml'), 'utf8').split('\n').findIndex((l) => l.includes('p(95) +100% floor 10ms')) + 1
    expect(r.errors).toContainEqual(
      expect.stringMatching(new RegExp(`^::error title=loadgate regression%3A latency p\\(95\\) \\+100%25 floor 10ms,file=perf/level-slow.yaml,line=${line}::total: latency p\\(95\\) \\+100%25 floor 10ms regressed: `))
    )
  }, 120_000)
})

describe('failures that stop the action before any report', () => {
  it('an invalid spec fails the step with the engine message', async () => {
    const r = await run({ name: 'push', runId: 200, branch: 'main' }, { spec: 'perf/invalid.yaml' })
    expect(r.code).toBe(1)
    const error = r.errors.join('\n')
    expect(error).toMatch(/loadgate run: the spec or the command line is invalid \(exit code 2\)/)
    expect(error).toContain('invalid.yaml') // the engine names the file and the problem
    expect(r.outputs).toEqual({})
  })

  it('a missing spec fails the step and says where it looked', async () => {
    const r = await run({ name: 'push', runId: 201, branch: 'main' }, { spec: 'perf/nope.yaml' })
    expect(r.code).toBe(1)
    expect(r.errors[0]).toMatch(/^::error::spec not found: .*perf\/nope.yaml \(input `spec` is perf\/nope.yaml, relative to the working directory /)
  })

  it('an invalid input fails the step with what is allowed', async () => {
    const r = await run({ name: 'push', runId: 202, branch: 'main' }, { spec: 'perf/fast.yaml', 'fail-on': 'latency' })
    expect(r.code).toBe(1)
    expect(r.errors).toEqual([
      '::error::input `fail-on` is `latency`; use `none` or a list of `slo`, `regression`, `invalid-measurement` (e.g. `slo, regression`)'
    ])
  })

})

describe('runs that measured nothing or nothing valid are still reported', () => {
  it('a service that cannot start (exit 3): summary, comment and artifact say so and what to do; the step fails', async () => {
    const unused = await freePort()
    writeFileSync(
      join(ws, 'perf', 'nostart.yaml'),
      spec({ delay: '1ms', slo: 'p(95) < 1s' }).replace('command: ["${LOADGATE}", "serve"', 'command: ["/nonexistent/server", "serve"')
    )
    const r = await run(
      { name: 'pull_request', runId: 203, pr: 30, baseRef: 'main' },
      { spec: 'perf/nostart.yaml', 'fail-on': 'none' },
      { env: { LG_PORT: String(unused) } }
    )
    expect(r.code).toBe(1) // whatever fail-on says: nothing was measured
    expect(r.errors.join('\n')).toMatch(/loadgate run: the run could not be carried out \(exit code 3\)/)
    const said = 'loadgate: error: cannot start service `/nonexistent/server'
    expect(r.summary).toContain('### ⚠️ loadgate perf/nostart.yaml: the run could not be carried out')
    expect(r.summary).toContain(said)
    expect(r.summary).toContain('What to do: ')
    const ours = ourComments(30)
    expect(ours).toHaveLength(1)
    // The comment is the summary, its links to the run's artifacts made links to the artifact.
    const uploaded = api.artifacts.find((a) => a.runId === 203 && a.name === 'loadgate')!
    const linked = r.summary.replace('runs/203#artifacts', `runs/203/artifacts/${uploaded.id}`)
    expect(ours[0].body.trimEnd()).toBe(`${MARK}\n${linked.trimEnd()}`)
    const zip = api.artifacts.find((a) => a.runId === 203 && a.name === 'loadgate')!.zip
    expect(zipEntries(zip).sort()).toEqual(['comment.md', 'engine.log', 'pull-request.json', 'report.md'])
    expect(r.outputs).toMatchObject({ verdict: 'fail', slo: '', result: '', 'report-junit': '', 'comment-url': expect.stringContaining(`#issuecomment-${ours[0].id}`) })
    expect(readFileSync(r.outputs['report-markdown'], 'utf8')).toContain(said)
  })

  it('a target nobody listens on (exit 3) on a push is reported in the summary and the artifact', async () => {
    const closed = await freePort()
    writeFileSync(
      join(ws, 'perf', 'unreachable.yaml'),
      `version: 1\nname: unreachable\ndefaults:\n  base_url: http://127.0.0.1:${closed}\n  timeout: 1s\ntargets:\n  - name: home\n    path: /\nload:\n  connections: 1\n  duration: 2s\n`
    )
    const r = await run({ name: 'push', runId: 204, branch: 'main' }, { spec: 'perf/unreachable.yaml' })
    expect(r.code).toBe(1)
    expect(r.summary).toContain(`loadgate: error: target \`127.0.0.1:${closed}\` is unreachable`)
    expect(zipEntries(api.artifacts.find((a) => a.runId === 204 && a.name === 'loadgate')!.zip).sort()).toEqual(['engine.log', 'report.md'])
  })

  // An open model whose arrivals cannot all be in flight, with health limits that hold the
  // generator to its schedule within 1us: the drops are the generator's, and the engine calls
  // the measurement invalid (exit 5), as engine/tests/it/load_model.rs provokes it. (Under the
  // default limits the same drops are the slow server's, judged by the SLOs.)
  const overloaded = (name: string) =>
    spec({ name, delay: '100ms', slo: 'p(95) < 1s', duration: '2s' }).replace(
      'load:\n  connections: 4\n  duration: 2s',
      'load:\n  model: open\n  rate: 100/s\n  max_in_flight: 2\n  duration: 2s\n  health: { late_p99: 1us, dropped: 0% }'
    )

  it('an invalid measurement (exit 5) on a pull request: reported with why and what to do, and fails by default', async () => {
    writeFileSync(join(ws, 'perf', 'overloaded.yaml'), overloaded('overloaded'))
    const r = await run({ name: 'pull_request', runId: 205, pr: 31, baseRef: 'main' }, { spec: 'perf/overloaded.yaml' })
    expect(r.code).toBe(1)
    expect(verdictOf(r).verdict).toBe('invalid_measurement')
    expect(r.outputs).toMatchObject({ verdict: 'fail' })
    expect(r.errors).toContainEqual(expect.stringMatching(/^::error::loadgate: the engine's verdict is invalid_measurement \(exit code 5\)/))
    expect(r.summary).toMatch(/> \*\*Invalid measurement\*\*: this run did not apply the planned load \(stage 1: \d+ of \d+ requests were dropped/)
    expect(r.summary).toContain('This step fails (`fail-on` names `invalid-measurement`).')
    expect(r.summary).toContain(readFileSync(r.outputs['report-markdown'], 'utf8')) // the engine's report below
    const ours = ourComments(31)
    expect(ours).toHaveLength(1)
    expect(ours[0].body).toContain('**Invalid measurement**')
    const zip = api.artifacts.find((a) => a.runId === 205 && a.name === 'loadgate')!.zip
    expect(zipEntries(zip)).toEqual(expect.arrayContaining(['result.json', 'report.md', 'report.html', 'report.junit.xml', 'verdict.json', 'comment.md']))
  })

  it('an invalid measurement on a push to main with fail-on: slo passes, is kept out of the window, and is no baseline', async () => {
    const repo = new StandIn()
    await repo.start()
    try {
      const at = (event: Event, name: string) =>
        runAction({ api: repo.url, workspace: ws, event, inputs: { 'engine-path': engineIn(ws), spec: name, 'fail-on': 'slo' }, env: { LG_PORT: String(port) } })
      writeFileSync(join(ws, 'perf', 'main.yaml'), spec({ name: 'main', delay: '1ms', slo: 'p(95) < 1s', duration: '2s' }))
      const good = await at({ name: 'push', runId: 600, branch: 'main' }, 'perf/main.yaml')
      expect(good.code, good.stdout).toBe(0)
      repo.addRun({ id: 600 })
      // The same spec name, overloaded: the next push measures nothing valid.
      writeFileSync(join(ws, 'perf', 'main-overloaded.yaml'), overloaded('main'))
      const bad = await at({ name: 'push', runId: 601, branch: 'main' }, 'perf/main-overloaded.yaml')
      expect(bad.code, bad.stdout).toBe(0)
      expect(verdictOf(bad).verdict).toBe('invalid_measurement')
      expect(bad.summary).toContain('This step does not fail for it (fail-on: slo).')
      expect(bad.stdout).toContain("History window: 1 result(s) kept in the artifact's history/ (not this run's: its measurement is invalid)")
      expect(zipEntries(repo.artifacts.find((a) => a.runId === 601 && a.name === 'loadgate')!.zip)).toEqual(expect.arrayContaining(['result.json', 'history/run-600.json']))
      expect(zipEntries(repo.artifacts.find((a) => a.runId === 601 && a.name === 'loadgate')!.zip)).not.toContain('history/run-601.json')
      repo.addRun({ id: 601 }) // a successful run, as its step passed

      const pr = await at({ name: 'pull_request', runId: 650, pr: 40, baseRef: 'main' }, 'perf/main.yaml')
      expect(pr.code, pr.stdout).toBe(0)
      expect(pr.stdout).toContain('Run #601 (https://github.com/octo/shop/actions/runs/601) holds an invalid measurement: not a baseline; looking further back.')
      expect(pr.summary).toContain('Baseline: [run #600]')
    } finally {
      await repo.stop()
    }
  })
})

describe('an engine that crashes', () => {
  it('fails the step and says the engine was killed, quoting nothing it did not say as loadgate', async () => {
    // Not loadgate: a stand-in that prints a line and kills itself, as a crashing binary would.
    const crasher = join(ws, 'crashing-engine')
    writeFileSync(crasher, '#!/bin/sh\necho "about to crash" >&2\nkill -SEGV $$\n', { mode: 0o755 })
    const r = await run({ name: 'push', runId: 250, branch: 'main' }, { spec: 'perf/fast.yaml', 'engine-path': crasher })
    expect(r.code).toBe(1)
    expect(r.errors.join('\n')).toContain(
      "loadgate run: the engine crashed: it was killed by a signal (the engine's whole output is in the step log and in engine.log in the artifact)"
    )
    expect(r.stdout).toContain('about to crash') // in the step's log
  })
})

describe('getting the engine', () => {
  const version = readFileSync(join(ACTION_ROOT, 'engine', 'Cargo.toml'), 'utf8').match(/^version = "([^"]+)"/m)![1]
  const gnu = 'loadgate-x86_64-unknown-linux-gnu.tar.gz'
  const musl = 'loadgate-x86_64-unknown-linux-musl.tar.gz'

  /** The real engine packaged as the release workflow packages it (`loadgate/loadgate` in a tar.gz), made once. */
  let packaged: Buffer | undefined
  function archive(): Buffer {
    if (packaged === undefined) {
      const dir = mkdtempSync(join(tmpdir(), 'loadgate-release-'))
      mkdirSync(join(dir, 'loadgate'))
      copyFileSync(bin, join(dir, 'loadgate', 'loadgate'))
      execFileSync('tar', ['-czf', join(dir, 'a.tar.gz'), '-C', dir, 'loadgate'])
      packaged = readFileSync(join(dir, 'a.tar.gz'))
    }
    return packaged
  }

  /**
   * A release holding `assets` (archive names), each with its `.sha256` (a wrong one with
   * `tamper`). Every archive holds this machine's engine, whatever its name says: the test is
   * which one the action picks, and that the one it picked runs.
   */
  function release(assets: string[], tamper = false): Map<string, Buffer> {
    const data = archive()
    const sum = createHash('sha256').update(tamper ? Buffer.from('something else') : data).digest('hex')
    return new Map(assets.flatMap((name): [string, Buffer][] => [[name, data], [`${name}.sha256`, Buffer.from(`${sum}  ${name}\n`)]]))
  }

  // An invalid spec stops the action right after the engine has been got and has run once.
  const stopEarly = { spec: 'perf/invalid.yaml', 'engine-path': '' }
  const fromRepo = { env: { GITHUB_ACTION_REPOSITORY: 'loadgate/loadgate' } }
  // These tests run where the gnu build is the first choice: Linux x64 with glibc 2.34 or newer.
  const glibc = process.platform === 'linux' ? runtimeGlibc() : undefined
  const newGlibc = process.arch === 'x64' && glibc !== undefined && releaseTargets('linux', 'x64', glibc).targets.length === 2
  const chosenFor = `chosen for linux-x64 with glibc ${glibc}: the gnu build, which needs glibc 2.34 or newer, else the static musl build`

  it.runIf(newGlibc)('downloads the gnu build of its own version over the musl one, verifies its checksum, and caches it', async () => {
    // The debug-info assets sit beside the binaries in a release; never picked.
    api.releases.set(`v${version}`, release([musl, gnu, 'loadgate-x86_64-unknown-linux-gnu.debug.tar.gz', 'loadgate-aarch64-apple-darwin.tar.gz']))
    const toolCache = mkdtempSync(join(tmpdir(), 'loadgate-tool-cache-'))
    const from = api.requests.length
    const first = await run({ name: 'push', runId: 300, branch: 'main' }, stopEarly, { ...fromRepo, toolCache })
    expect(first.stdout).toContain(`Engine: release v${version} asset ${gnu} (downloaded, sha256 verified, cached), ${chosenFor}\n`)
    expect(first.errors.join('\n')).toMatch(/exit code 2/) // the downloaded engine ran and judged the spec
    expect(api.calls(from).filter((c) => c.includes('release-downloads'))).toEqual([
      `GET /release-downloads/v${version}/${gnu}`,
      `GET /release-downloads/v${version}/${gnu}.sha256`
    ])

    const again = api.requests.length
    const second = await run({ name: 'push', runId: 301, branch: 'main' }, stopEarly, { ...fromRepo, toolCache })
    expect(second.stdout).toContain(`Engine: release ${version} for x86_64-unknown-linux-gnu from the tool cache (${toolCache}/loadgate/${version}/x86_64-unknown-linux-gnu), ${chosenFor}`)
    expect(api.calls(again).filter((c) => c.includes('release'))).toEqual([])
  })

  it.runIf(newGlibc)('takes the static musl build when the release has no gnu build, and says why', async () => {
    api.releases.set(`v${version}`, release([musl, 'loadgate-aarch64-unknown-linux-gnu.tar.gz']))
    const toolCache = mkdtempSync(join(tmpdir(), 'loadgate-tool-cache-'))
    const first = await run({ name: 'push', runId: 307, branch: 'main' }, stopEarly, { ...fromRepo, toolCache })
    expect(first.stdout).toContain(
      `Engine: release v${version} asset ${musl} (downloaded, sha256 verified, cached), ${chosenFor}; the release has no ${gnu} with its .sha256\n`
    )
    expect(first.errors.join('\n')).toMatch(/exit code 2/)
    // Cached under its own target: found again, and never taken for a gnu build.
    const second = await run({ name: 'push', runId: 308, branch: 'main' }, stopEarly, { ...fromRepo, toolCache })
    expect(second.stdout).toContain(`Engine: release ${version} for x86_64-unknown-linux-musl from the tool cache`)
  })

  it.runIf(newGlibc)('refuses a download whose checksum does not match, and tries nothing else', async () => {
    api.releases.set(`v${version}`, release([gnu, musl], true))
    const from = api.requests.length
    const r = await run({ name: 'push', runId: 302, branch: 'main' }, stopEarly, fromRepo)
    expect(r.code).toBe(1)
    expect(r.errors.join('\n')).toMatch(new RegExp(`checksum mismatch for ${gnu} of release v${version}: expected [0-9a-f]{64}, got [0-9a-f]{64}`))
    expect(r.stdout).not.toContain('Engine:')
    expect(api.calls(from).filter((c) => c.includes(musl))).toEqual([])
  })

  it.runIf(newGlibc)("a release without this runner's binaries falls back to building from the action's source, saying why", async () => {
    // Another platform's archive, and this one's debug info only.
    api.releases.set(`v${version}`, release(['loadgate-aarch64-apple-darwin.tar.gz', 'loadgate-x86_64-unknown-linux-gnu.debug.tar.gz']))
    // Without cargo on PATH the build stops at once and says so: the fallback taken, nothing built.
    const noCargo = { env: { ...fromRepo.env, PATH: dirname(process.execPath) + ':/usr/bin:/bin' } }
    const r = await run({ name: 'push', runId: 305, branch: 'main' }, stopEarly, noCargo)
    expect(r.stdout).toContain(
      `No release binary: release v${version} of loadgate/loadgate has no ${gnu} or ${musl} with its .sha256 ` +
        `(for linux-x64 with glibc ${glibc}: the gnu build, which needs glibc 2.34 or newer, else the static musl build); ` +
        `it has loadgate-aarch64-apple-darwin.tar.gz, loadgate-x86_64-unknown-linux-gnu.debug.tar.gz. Building the engine from the action's source.`
    )
    expect(r.errors.join('\n')).toContain('cannot build the engine: cargo is not on PATH')

    // With engine-version given, no fallback: the step fails and names what is missing.
    const pinned = await run({ name: 'push', runId: 306, branch: 'main' }, { ...stopEarly, 'engine-version': version }, noCargo)
    expect(pinned.errors.join('\n')).toContain(`input \`engine-version\` is ${version}, but release v${version} of loadgate/loadgate has no ${gnu} or ${musl}`)
  })

  it.runIf(process.platform !== 'win32')("runs the engine cargo says it built, with cargo's output, not its JSON, in the log", async () => {
    // A stand-in cargo (the real build is the `uses: ./` test below): its messages as cargo
    // writes them, the binary somewhere other than target/fallback.
    api.releases.delete(`v${version}`)
    const tools = mkdtempSync(join(tmpdir(), 'loadgate-cargo-'))
    writeFileSync(
      join(tools, 'cargo'),
      [
        '#!/bin/sh',
        'echo "   Compiling loadgate v0.0.0 (stand-in cargo: $*)" >&2',
        `echo '${JSON.stringify({ reason: 'compiler-artifact', target: { name: 'loadgate', kind: ['lib'] }, executable: null })}'`,
        `echo '${JSON.stringify({ reason: 'compiler-artifact', target: { name: 'loadgate', kind: ['bin'] }, executable: engineIn(ws) })}'`,
        'echo "    Finished \\`fallback\\` profile [optimized + debuginfo] target(s) in 0.01s" >&2',
        ''
      ].join('\n'),
      { mode: 0o755 }
    )
    const r = await run({ name: 'push', runId: 309, branch: 'main' }, stopEarly, { env: { ...fromRepo.env, PATH: `${tools}:${process.env.PATH}` } })
    expect(r.stdout).toContain(`No release binary: loadgate/loadgate has no release v${version}. Building the engine from the action's source.`)
    expect(r.stdout).toContain('Compiling loadgate v0.0.0 (stand-in cargo: build --profile fallback --locked -p loadgate --message-format=json-render-diagnostics)')
    expect(r.stdout).toContain('Finished `fallback` profile')
    expect(r.stdout).not.toContain('compiler-artifact')
    expect(r.stdout).toContain("Engine: built from the action's source")
    expect(r.errors.join('\n')).toMatch(/exit code 2/) // the binary cargo named ran and judged the spec
  })

  it('an explicit engine-version without a release fails and says so', async () => {
    const r = await run({ name: 'push', runId: 303, branch: 'main' }, { ...stopEarly, 'engine-version': '9.9.9' }, fromRepo)
    expect(r.code).toBe(1)
    expect(r.errors.join('\n')).toContain('input `engine-version` is 9.9.9, but loadgate/loadgate has no release v9.9.9')
  })

  it('uses: ./ (the action inside the workspace) builds the engine from that source with cargo', async () => {
    // This checkout as the workspace, as in this repository's own workflow; even with an action
    // repository set, a local action never downloads a release of another commit.
    const r = await runAction({
      api: api.url,
      workspace: ACTION_ROOT,
      event: { name: 'push', runId: 304, branch: 'main' },
      inputs: { spec: 'engine/tests/specs/invalid/bad_threshold.yaml' },
      env: { GITHUB_ACTION_REPOSITORY: 'loadgate/loadgate' }
    })
    expect(r.stdout).toContain('No release binary: the action is used from a local path (uses: ./)')
    expect(r.stdout).toContain('::group::Build the loadgate engine (cargo build --profile fallback)')
    expect(r.stdout).toContain('Finished `fallback` profile')
    expect(r.stdout).toContain(`Engine: built from the action's source in ${ACTION_ROOT}`)
    expect(r.errors.join('\n')).toMatch(/exit code 2/)
  }, 900_000)
})
