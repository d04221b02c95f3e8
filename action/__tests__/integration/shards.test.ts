/**
 * Shards in the action, run as the runner runs it against the local GitHub stand-in, with the
 * real engine: shard steps (input `shard`) upload their results under their own names, and a
 * merge step (`mode: merge`) of the same workflow run downloads them, merges them with
 * `loadgate merge`, and reports, comments and uploads as the stored mode does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { StandIn } from './standin.js'
import { engineIn, freePort, runAction, spec, zipEntries, type ActionRun, type Event } from './harness.js'

const MARK = '<!-- loadgate-comment: perf.yml/gate/loadgate -->'

let api: StandIn
let ws: string

beforeAll(async () => {
  api = new StandIn()
  await api.start()
  ws = mkdtempSync(join(tmpdir(), 'loadgate-action-shards-'))
  mkdirSync(join(ws, 'perf'))
  // 4 connections: 1 for each of 4 shards, 2 for each of 2.
  writeFileSync(join(ws, 'perf', 'sharded.yaml'), spec({ name: 'sharded', delay: '1ms', slo: 'p(95) < 1s' }))
})

afterAll(async () => {
  await api?.stop()
})

/** One step of the workflow; each shard starts its own target, so each gets its own port. */
async function step(event: Event, inputs: Record<string, string>): Promise<ActionRun> {
  const port = await freePort()
  return runAction({
    api: api.url,
    workspace: ws,
    event,
    inputs: { 'engine-path': engineIn(ws), spec: 'perf/sharded.yaml', ...inputs },
    env: { LG_PORT: String(port) }
  })
}

/**
 * The matrix job: shards 1..n of one workflow run at the same time, given one start time
 * (RFC 3339, a few seconds ahead: time for each to start its target) as a planning job would.
 */
async function shards(event: Event, n: number, only?: number[]): Promise<ActionRun[]> {
  const startAt = new Date(Date.now() + 5000).toISOString()
  const ks = only ?? Array.from({ length: n }, (_, i) => i + 1)
  const runs = await Promise.all(ks.map((k) => step(event, { shard: `${k}/${n}`, 'start-at': startAt })))
  for (const r of runs) expect(r.code, r.stdout).toBe(0)
  return runs
}

/** What these tests read of a result file (schema/result.schema.json). */
interface ResultFile {
  shard?: { index: number; count: number }
  merged?: { results: number; shard_count?: number; missing: number[]; partial: boolean }
  load: { connections?: number }
  total: { requests: number }
}

/** The result file a step wrote (its `result` output). */
function resultOf(r: ActionRun): ResultFile {
  return JSON.parse(readFileSync(r.outputs.result, 'utf8'))
}

function artifactsOf(runId: number): string[] {
  return api.artifacts.filter((a) => a.runId === runId).map((a) => a.name)
}

describe('a shard step', () => {
  it('runs its share of the load, uploads it as loadgate-shard-2-of-4, compares nothing and posts no comment', async () => {
    const from = api.requests.length
    const r = await step({ name: 'pull_request', runId: 700, pr: 60, baseRef: 'main' }, { shard: '2/4' })
    expect(r.code, r.stdout).toBe(0)
    expect(r.stdout).toContain('::group::loadgate run perf/sharded.yaml --shard 2/4')
    expect(artifactsOf(700)).toEqual(['loadgate-shard-2-of-4'])
    expect(zipEntries(api.artifacts.find((a) => a.runId === 700)!.zip).sort()).toEqual(['report.md', 'result.json'])
    // No baseline lookup, no comment: only the artifact upload (twirp, blob PUTs).
    const rest = api.calls(from).filter((c) => !c.includes('/twirp/') && !c.startsWith('PUT /devstoreaccount1/'))
    expect(rest).toEqual([])
    expect(api.comments.get(60) ?? []).toEqual([])
    // The engine's share: 1 of the spec's 4 connections, recorded as shard 2 of 4.
    const result = resultOf(r)
    expect(result.shard).toEqual({ index: 2, count: 4 })
    expect(result.load.connections).toBe(1)
    expect(r.summary.trim()).toMatch(
      /^\*\*loadgate perf\/sharded\.yaml, shard 2 of 4\*\*: rps \S+, p95 .+\. Uploaded as the artifact `loadgate-shard-2-of-4`; the SLOs and the comparison with the baseline are judged on the merged result \(the `mode: merge` step\)\.$/
    )
    expect(r.summary.trim().split('\n')).toHaveLength(1)
    // Its numbers, not its decisions: those are the merge step's.
    expect(r.outputs).toMatchObject({ verdict: '', slo: '', regression: '', 'comment-url': '', 'report-html': '' })
    expect(Number(r.outputs.rps)).toBeGreaterThan(0)
  })

  it('refuses a shard that is not K/N before running anything', async () => {
    const r = await step({ name: 'push', runId: 701, branch: 'main' }, { shard: '5/4' })
    expect(r.code).toBe(1)
    expect(r.errors).toEqual(['::error::input `shard` is `5/4`: the shard index K must be 1 to 4'])
    expect(artifactsOf(701)).toEqual([])
  })
})

describe('a merge step', () => {
  it('on main merges the shards of its run and uploads the merged result as the next baseline', async () => {
    const event: Event = { name: 'push', runId: 800, branch: 'main' }
    const ran = await shards(event, 2)
    expect(artifactsOf(800).sort()).toEqual(['loadgate-shard-1-of-2', 'loadgate-shard-2-of-2'])

    const from = api.requests.length
    const r = await step(event, { mode: 'merge' })
    api.addRun({ id: 800, event: 'push', head_branch: 'main' })
    expect(r.code, r.stdout).toBe(0)
    const ids = api.artifacts.filter((a) => a.runId === 800 && a.name.includes('-shard-')).map((a) => a.id)
    expect(api.calls(from)).toEqual(
      expect.arrayContaining([
        'GET /repos/octo/shop/actions/runs/800/artifacts',
        ...ids.map((id) => `GET /repos/octo/shop/actions/artifacts/${id}/zip`)
      ])
    )
    // The merged result: both shards, their requests added up.
    const merged = resultOf(r)
    expect(merged.merged).toMatchObject({ results: 2, shard_count: 2, missing: [], partial: false })
    const shardTotals = ran.map((s) => resultOf(s).total.requests)
    expect(merged.total.requests).toBe(shardTotals[0] + shardTotals[1])
    expect(r.outputs).toMatchObject({ verdict: 'pass', slo: 'pass', regression: 'no-baseline' })
    const uploaded = api.artifacts.find((a) => a.runId === 800 && a.name === 'loadgate')!
    expect(zipEntries(uploaded.zip)).toEqual(expect.arrayContaining(['result.json', 'report.md', 'report.html', 'verdict.json', 'history/run-800.json']))
    expect(r.summary).toContain(readFileSync(r.outputs['report-markdown'], 'utf8'))
  })

  it('on a pull request merges its 2 shards, compares with that baseline, posts one comment and uploads loadgate', async () => {
    const event: Event = { name: 'pull_request', runId: 801, pr: 61, baseRef: 'main' }
    // 100 artifacts of other steps first: the shards are on the listing's second page.
    for (let i = 0; i < 100; i++) api.artifacts.push({ id: 5000 + i, name: `coverage-${i}`, runId: 801, zip: Buffer.alloc(0), expired: false })
    await shards(event, 2)
    const from = api.requests.length
    const r = await step(event, { mode: 'merge' })
    expect(r.code, r.stdout).toBe(0)
    expect(resultOf(r).merged).toMatchObject({ results: 2, shard_count: 2 })
    expect(r.summary).toContain('Baseline: [run #800](https://github.com/octo/shop/actions/runs/800) (push, 800aaaa)')
    expect(r.outputs.regression).not.toBe('no-baseline')
    const ours = (api.comments.get(61) ?? []).filter((c) => c.body.startsWith(MARK))
    expect(ours).toHaveLength(1)
    expect(api.comments.get(61)).toHaveLength(1)
    expect(ours[0].body).toContain('Baseline: [run #800]')
    expect(artifactsOf(801).filter((n) => n.startsWith('loadgate')).sort()).toEqual(['loadgate', 'loadgate-shard-1-of-2', 'loadgate-shard-2-of-2', 'loadgate.html'])
    const listed = api.requests.slice(from).filter((q) => q.url.startsWith('/repos/octo/shop/actions/runs/801/artifacts'))
    expect(listed.map((q) => new URL(q.url, api.url).searchParams.get('page') ?? '1')).toEqual(['1', '2'])
  })

  it('with a shard missing, fails and says what to do; with allow-missing: true, merges a partial result', async () => {
    const event: Event = { name: 'push', runId: 802, branch: 'feature' }
    await shards(event, 2, [1])
    const refused = await step(event, { mode: 'merge' })
    expect(refused.code).toBe(1)
    expect(refused.errors.join('\n')).toMatch(/loadgate merge: the shards' results cannot be merged \(exit code 2\)/)
    expect(refused.summary).toContain('### ⚠️ loadgate merge: the shards could not be merged')
    expect(refused.summary).toContain('set `allow-missing: true` on this step')

    const partial = await step(event, { mode: 'merge', 'allow-missing': 'true' })
    expect(partial.code, partial.stdout).toBe(0)
    expect(resultOf(partial).merged).toMatchObject({ results: 1, shard_count: 2, missing: [2], partial: true })
  })

  it('with no shard artifact in its run, fails with the reason and still writes the summary and the comment', async () => {
    const r = await step({ name: 'pull_request', runId: 900, pr: 62, baseRef: 'main' }, { mode: 'merge' })
    expect(r.code).toBe(1)
    expect(r.errors).toEqual([
      '::error::mode: merge: no artifact named loadgate-shard-K-of-N in this workflow run (run 900): nothing to merge (see the job summary)'
    ])
    expect(r.summary).toContain('### ⚠️ loadgate merge: no shard results in this run')
    expect(r.summary).toContain('Not merged: there is no merged result, so nothing was compared')
    const ours = (api.comments.get(62) ?? []).filter((c) => c.body.startsWith(MARK))
    expect(ours).toHaveLength(1)
    expect(ours[0].body).toContain('no shard results in this run')
    expect(r.outputs).toMatchObject({ verdict: 'fail', slo: '', result: '' })
  })
})
