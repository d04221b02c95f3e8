/**
 * main.ts's flow, with `@actions/core` mocked (as actions/typescript-action tests its main) and a
 * stand-in engine that writes the files a real one would: the steps run in order, and everything
 * the action says comes from the engine's verdict document.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as core from '../fixtures/core.js'
import { compared, slo, verdictDoc } from '../fixtures/verdict.js'
import { checkout, git, origin } from '../fixtures/git.js'
import type { LoadgateVerdict } from '../../src/generated/verdict.js'

// Mocks are declared before main.ts is imported (vi.mock is hoisted above the imports).
vi.mock('@actions/core', () => import('../fixtures/core.js'))
const payload = vi.hoisted(() => ({ current: {} as object }))
vi.mock('@actions/github', async (importOriginal) => {
  const real = await importOriginal<typeof import('@actions/github')>()
  const Context = real.context.constructor as new () => typeof real.context
  // github.context as the action gets it, made from the variables each test stubs (and its payload).
  return {
    get context() {
      return Object.assign(new Context(), { payload: payload.current })
    },
    getOctokit: vi.fn()
  }
})
vi.mock('../../src/engine.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../src/engine.js')>()),
  acquireEngine: vi.fn(),
  invoke: vi.fn()
}))
vi.mock('../../src/artifacts.js', () => ({ uploadArtifact: vi.fn(async () => 1), downloadResult: vi.fn(), downloadArtifact: vi.fn() }))
vi.mock('../../src/comment.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../src/comment.js')>()),
  upsertComment: vi.fn(async () => ({ outcome: 'created', url: 'https://github.test/c/1' }))
}))

const github = await import('@actions/github')
const { acquireEngine, invoke } = await import('../../src/engine.js')
const { downloadArtifact, downloadResult, uploadArtifact } = await import('../../src/artifacts.js')
const { upsertComment } = await import('../../src/comment.js')
const { run } = await import('../../src/main.js')

const ENGINE = '/opt/stand-in/loadgate'
const MD = '## The engine report\n\n| p95 | 900 µs |\n'

let ws: string
let temp: string
let inputs: Record<string, string>

/**
 * The engine's stand-in: `run` writes a result file the action must not read (it is not even
 * JSON) and ends with `runCode`; `report` writes each format, the JSON being `doc` (or
 * `unbased` when run without `--baseline`), and refuses the baseline when told to.
 */
function engine(o: { runCode?: number; doc: LoadgateVerdict; unbased?: LoadgateVerdict; refuseBaseline?: boolean; refuseHistory?: boolean; result?: string }) {
  vi.mocked(invoke).mockImplementation(async (_bin, args) => {
    const at = (flag: string) => args[args.indexOf(flag) + 1]
    if (args[0] === 'run' || args[0] === 'ab' || args[0] === 'merge') {
      // The action reads a result's spec name only, to keep the history window to one spec.
      writeFileSync(at('--out'), o.result ?? 'opaque: the action reads the verdict document, never the result')
      return { code: o.runCode ?? 0, stderr: '' }
    }
    const based = args.includes('--baseline')
    if (args.includes('--baseline-history') && o.refuseHistory) {
      return { code: 2, stderr: `loadgate: error: \`${at('--baseline-history')}/run-90.json\` is not a loadgate result: no \`result_version\`\n` }
    }
    if (based && o.refuseBaseline) {
      return { code: 2, stderr: 'loadgate: error: the results come from different specs (`old` and `api`)\n' }
    }
    const format = at('--format')
    const doc = based ? o.doc : (o.unbased ?? o.doc)
    writeFileSync(at('--output'), format === 'json' ? JSON.stringify(doc) : format === 'md' ? MD : '<!doctype html>')
    return { code: 0, stderr: '' }
  })
}

/** The commands the engine was called with, the spec and temp folders shortened. */
function commands(): string[] {
  return vi.mocked(invoke).mock.calls.map(([, args]) => shorten(args.join(' ')))
}

/**
 * `text` with the workspace and the temp folder shortened, and this run's own folder (made
 * new by each run, `TEMP/loadgate/<artifact-name>-XXXXXX`) as `TEMP/loadgate/<artifact-name>`.
 */
function shorten(text: string): string {
  return unrandom(text).replaceAll(ws, 'WS').replaceAll(temp, 'TEMP')
}

function outputs(): Record<string, string> {
  return Object.fromEntries(core.setOutput.mock.calls.map(([k, v]) => [k, unrandom(String(v))]))
}

/** `text` with this run's own folder (`loadgate/<artifact-name>-XXXXXX`, made new by each run) as `loadgate/<artifact-name>`. */
function unrandom(text: string): string {
  return text.replace(/(\/loadgate\/[^/\s]+)-[A-Za-z0-9]{6}(?=\/|\s|$)/g, '$1')
}

/** A file of this run's own folder (the folder of the `report-markdown` output). */
function outFile(...parts: string[]): string {
  const md = core.setOutput.mock.calls.find(([name]) => name === 'report-markdown')
  return join(String(md?.[1] ?? '').replace(/\/[^/]*$/, ''), ...parts)
}

/** A file of this run's folder, relative to it. */
function inOut(file: string): string {
  return unrandom(file).replace(`${temp}/loadgate/loadgate/`, '')
}

/** The zipped artifacts uploaded (not the HTML report's own, unzipped one). */
function zipped() {
  return vi.mocked(uploadArtifact).mock.calls.filter(([, , , o]) => !o?.skipArchive)
}

/** A workflow run of the REST API, on main. */
function workflowRun(id: number, event = 'push') {
  return { id, run_number: id, event, status: 'completed', conclusion: 'success', head_branch: 'main', head_sha: `${id}`.padEnd(40, 'a'), created_at: new Date(Date.UTC(2024, 4, 1) + id * 60_000).toISOString(), html_url: `https://github.com/octo/shop/actions/runs/${id}` }
}

/**
 * The REST API with these earlier runs (each with an artifact `loadgate` of id 10 × run id);
 * a download writes `result.json` and the run's `history/` files (name -> content).
 */
function repository(runs: Array<{ id: number; event?: string; history?: Record<string, string> }>) {
  vi.mocked(github.getOctokit).mockReturnValue({
    rest: {
      actions: {
        listWorkflowRuns: async () => ({ data: { workflow_runs: runs.map((r) => workflowRun(r.id, r.event)) } }),
        listWorkflowRunArtifacts: async ({ run_id }: { run_id: number }) => ({ data: { artifacts: [{ id: 10 * run_id, name: 'loadgate', expired: false }] } })
      }
    }
  } as unknown as ReturnType<typeof github.getOctokit>)
  vi.mocked(downloadResult).mockImplementation(async (_id, from, dir) => {
    writeFileSync(join(dir, 'result.json'), 'opaque')
    const history = runs.find((r) => r.id === from.runId)?.history ?? {}
    if (Object.keys(history).length > 0) mkdirSync(join(dir, 'history'))
    for (const [name, text] of Object.entries(history)) writeFileSync(join(dir, 'history', name), text)
    return join(dir, 'result.json')
  })
}

/** The line of links above the report: to run `run`, its artifact and HTML report (by id once uploaded). */
function links(run: number, artifact?: number, html?: number): string {
  const url = `https://github.com/octo/shop/actions/runs/${run}`
  const at = (id?: number) => (id === undefined ? `${url}#artifacts` : `${url}/artifacts/${id}`)
  return `[Workflow run](${url}) · [Artifact \`loadgate\`](${at(artifact)}) · [HTML report](${at(html)})`
}

function event(name: string, body: Record<string, unknown> = {}) {
  vi.stubEnv('GITHUB_EVENT_NAME', name)
  payload.current = body
}

beforeEach(() => {
  core.reset()
  ws = mkdtempSync(join(tmpdir(), 'loadgate-main-ws-'))
  temp = mkdtempSync(join(tmpdir(), 'loadgate-main-temp-'))
  mkdirSync(join(ws, 'perf'))
  writeFileSync(join(ws, 'perf', 'api.yaml'), 'version: 1\n')
  for (const [k, v] of Object.entries({
    GITHUB_REPOSITORY: 'octo/shop',
    GITHUB_RUN_ID: '500',
    GITHUB_REF_NAME: 'main',
    GITHUB_WORKFLOW: 'perf',
    GITHUB_WORKFLOW_REF: 'octo/shop/.github/workflows/perf.yml@refs/heads/main',
    GITHUB_JOB: 'gate',
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_WORKSPACE: ws,
    GITHUB_ACTION_REPOSITORY: '',
    GITHUB_EVENT_PATH: '',
    RUNNER_TEMP: temp,
    ACTIONS_RUNTIME_TOKEN: 'runtime',
    ACTIONS_RESULTS_URL: 'https://results.test/'
  })) {
    vi.stubEnv(k, v)
  }
  event('push', { repository: { default_branch: 'main' } })
  inputs = { spec: 'perf/api.yaml', 'github-token': 'ghs_token' }
  core.getInput.mockImplementation((name) => inputs[name] ?? '')
  vi.mocked(acquireEngine).mockResolvedValue({ path: ENGINE, how: 'a stand-in' })
  repository([])
})

afterEach(() => {
  vi.unstubAllEnvs()
})

describe('main', () => {
  it('runs the steps in order and sets the outputs from the verdict document, without a baseline', async () => {
    engine({ doc: verdictDoc() })
    await run()

    expect(core.setFailed).not.toHaveBeenCalled()
    const out = 'TEMP/loadgate/loadgate'
    expect(commands()).toEqual([
      `run WS/perf/api.yaml --out ${out}/result.json`,
      `report ${out}/result.json --format md --output ${out}/report.md`,
      `report ${out}/result.json --format html --output ${out}/report.html`,
      `report ${out}/result.json --format junit --output ${out}/report.junit.xml --spec perf/api.yaml`,
      `report ${out}/result.json --format json --output ${out}/verdict.json --spec WS/perf/api.yaml`
    ])
    expect(vi.mocked(acquireEngine).mock.invocationCallOrder[0]).toBeLessThan(vi.mocked(invoke).mock.invocationCallOrder[0])
    expect(vi.mocked(invoke).mock.calls.every(([bin]) => bin === ENGINE)).toBe(true)
    // Raw numbers from the headline; words from the engine's decisions.
    expect(outputs()).toEqual({
      verdict: 'pass',
      slo: 'pass',
      regression: 'no-baseline',
      result: join(temp, 'loadgate', 'loadgate', 'result.json'),
      'report-markdown': join(temp, 'loadgate', 'loadgate', 'report.md'),
      'report-html': join(temp, 'loadgate', 'loadgate', 'report.html'),
      'report-junit': join(temp, 'loadgate', 'loadgate', 'report.junit.xml'),
      rps: '1234.5678',
      'p95-us': '900',
      'p99-us': '2100',
      'error-rate': '0.002',
      'comment-url': '',
      engine: ENGINE,
      'history-dir': ''
    })
    expect(core.summaryWritten).toEqual([
      `> Not compared with a baseline: a \`push\` event is not compared; this result becomes the baseline for pull requests into main.\n\n${links(500)}\n\n${MD}`
    ])
    expect(core.info).toHaveBeenCalledWith('api: rps 1,234.6/s, p50 850 µs, p95 900 µs, p99 2.10 ms, error rate 0.200%, requests 4,938')
    expect(core.info).toHaveBeenCalledWith('loadgate: PASSED: 1/1 SLOs met; no baseline to compare with; the step passes (fail-on: slo, regression, invalid-measurement)')
    expect(core.error).not.toHaveBeenCalled()
    const [name, files] = zipped()[0]
    expect(name).toBe('loadgate')
    // A push carries the history window; the first run on the branch starts it.
    expect(files.map(inOut)).toEqual(['result.json', 'report.md', 'report.html', 'report.junit.xml', 'verdict.json', 'history/run-500.json'])
    expect(core.info).toHaveBeenCalledWith('No history window carried on: the previous successful run of perf.yml on main with an artifact named `loadgate` was not found.')
    expect(upsertComment).not.toHaveBeenCalled()
  })

  it("annotates each failed SLO with the engine's formatted numbers and fails the step", async () => {
    const doc = verdictDoc({
      verdict: 'slo_failed',
      exit_code: 1,
      summary: 'FAILED: 1 of 2 SLOs failed; no baseline to compare with',
      slo_passed: false,
      slo: [slo(false), slo(true, { metric: 'errors', threshold: 'rate < 1%' })]
    })
    engine({ runCode: 1, doc })
    await run()

    expect(core.error.mock.calls).toEqual([
      [
        'total: p(95) < 1s failed, measured 1.52 s (limit 1 s)',
        { title: 'loadgate SLO failed: latency p(95) < 1s', file: join('perf', 'api.yaml') }
      ]
    ])
    expect(outputs()).toMatchObject({ verdict: 'fail', slo: 'fail', regression: 'no-baseline' })
    expect(core.setFailed.mock.calls).toEqual([['loadgate: 1 SLO threshold failed (fail-on: slo, regression, invalid-measurement)']])
  })

  it('lets fail-on choose which of the engine\'s decisions fail the step', async () => {
    writeFileSync(join(ws, 'base.json'), '{}')
    // Both an SLO failure and a regression: the engine's verdict is slo_failed, and `regressed` says the rest.
    const doc = compared(['regressed', 'unchanged'], { verdict: 'slo_failed', exit_code: 1, slo_passed: false, slo: [slo(false)] })
    const cases: Array<[string, string[]]> = [
      ['', ['loadgate: 1 SLO threshold failed; a regression against the baseline was found (fail-on: slo, regression, invalid-measurement)']],
      ['regression,slo', ['loadgate: 1 SLO threshold failed; a regression against the baseline was found (fail-on: slo, regression)']],
      ['regression', ['loadgate: a regression against the baseline was found (fail-on: regression)']],
      ['slo', ['loadgate: 1 SLO threshold failed (fail-on: slo)']],
      ['none', []]
    ]
    for (const [failOn, failed] of cases) {
      core.reset()
      inputs = { ...inputs, baseline: 'base.json', 'fail-on': failOn }
      engine({ runCode: 1, doc })
      await run()
      expect(core.setFailed.mock.calls.map(([m]) => m), failOn).toEqual(failed)
      expect(outputs()).toMatchObject({ verdict: 'fail', slo: 'fail', regression: 'regressed' })
    }
    expect(commands().at(-1)).toBe('report TEMP/loadgate/loadgate/result.json --baseline WS/base.json --format json --output TEMP/loadgate/loadgate/verdict.json --spec WS/perf/api.yaml')
  })

  it('on a pull request, compares with the base branch, or says why not when the engine refuses, and comments', async () => {
    event('pull_request', {
      pull_request: { number: 7, base: { ref: 'main' }, head: { repo: { full_name: 'octo/shop' } } },
      repository: { default_branch: 'main' }
    })
    const baseRun = { id: 100, run_number: 100, event: 'push', status: 'completed', conclusion: 'success', head_branch: 'main', head_sha: 'a'.repeat(40), created_at: '2024-05-01T00:00:00Z', html_url: 'https://github.com/octo/shop/actions/runs/100' }
    vi.mocked(github.getOctokit).mockReturnValue({
      rest: {
        actions: {
          listWorkflowRuns: async () => ({ data: { workflow_runs: [baseRun] } }),
          listWorkflowRunArtifacts: async () => ({ data: { artifacts: [{ id: 1000, name: 'loadgate', expired: false }] } })
        }
      }
    } as unknown as ReturnType<typeof github.getOctokit>)
    vi.mocked(downloadResult).mockImplementation(async (_id, _from, dir) => join(dir, 'result.json'))
    inputs = { ...inputs, comment: 'on-failure' }
    engine({ doc: compared(['regressed']), unbased: verdictDoc(), refuseBaseline: true })
    await run()

    expect(core.warning).toHaveBeenCalledWith(expect.stringMatching(/^The baseline cannot be compared with this run: loadgate: error: the results come from different specs/))
    expect(commands().filter((c) => c.includes('--baseline'))).toEqual([
      'report TEMP/loadgate/loadgate/result.json --baseline TEMP/loadgate/loadgate/baseline/result.json --format md --output TEMP/loadgate/loadgate/report.md'
    ])
    expect(core.setFailed).not.toHaveBeenCalled()
    expect(outputs()).toMatchObject({ verdict: 'pass', regression: 'no-baseline', 'comment-url': 'https://github.test/c/1' })
    const note =
      '> Not compared: the baseline, [run #100](https://github.com/octo/shop/actions/runs/100) (push, aaaaaaa), cannot be compared with this run ' +
      '(the engine says: the results come from different specs (`old` and `api`)).'
    // The summary, written before anything is uploaded, links to the run's artifacts; the
    // comment, after, to each artifact (the stand-in upload gives id 1).
    expect(core.summaryWritten).toEqual([`${note}\n\n${links(500)}\n\n${MD}`])
    // A passing run with comment: on-failure only updates an existing comment.
    expect(vi.mocked(upsertComment).mock.calls[0][1]).toMatchObject({
      issueNumber: 7,
      create: false,
      body: `<!-- loadgate-comment: perf.yml/gate/loadgate -->\n${note}\n\n${links(500, 1, 1)}\n\n${MD}`
    })
  })

  it("creates the comment with comment: on-failure when the engine's verdict is not pass", async () => {
    event('pull_request', { pull_request: { number: 8, base: { ref: 'main' } } })
    inputs = { ...inputs, baseline: 'none', comment: 'on-failure', 'fail-on': 'none' }
    engine({ runCode: 1, doc: verdictDoc({ verdict: 'slo_failed', exit_code: 1, slo_passed: false, slo: [slo(false)] }) })
    await run()
    expect(vi.mocked(upsertComment).mock.calls[0][1]).toMatchObject({ issueNumber: 8, create: true })
    expect(core.setFailed).not.toHaveBeenCalled()
  })

  it('reports an invalid measurement (exit 5), says why and what to do, and fails by fail-on', async () => {
    writeFileSync(join(ws, 'base.json'), '{}')
    inputs = { ...inputs, baseline: 'base.json' }
    const problems = ['stage 1: 166 of 200 requests were dropped: every in-flight slot was busy (raise `max_in_flight`)']
    const invalid = compared(['unchanged'], { verdict: 'invalid_measurement', exit_code: 5, slo_passed: false, slo: [slo(false)] })
    engine({ runCode: 5, doc: invalid, result: JSON.stringify({ spec: { name: 'api' }, health: { valid: false, problems } }) })
    await run()
    expect(commands()).toHaveLength(5) // the run, then every report as for any other run
    expect(outputs()).toMatchObject({ verdict: 'fail', slo: 'fail', regression: 'unchanged' })
    expect(core.setFailed.mock.calls).toEqual([[expect.stringMatching(/^loadgate: the engine's verdict is invalid_measurement \(exit code 5\)/)]])
    expect(core.error).not.toHaveBeenCalled() // its SLO results mean nothing: no annotation
    const [summary] = core.summaryWritten
    expect(summary).toContain('> Baseline: base.json.\n>\n> **Invalid measurement**: this run did not apply the planned load (stage 1: 166 of 200 requests were dropped')
    expect(summary).toContain('What to do: ')
    expect(summary).toContain('This step fails (`fail-on` names `invalid-measurement`).')
    expect(summary).toContain(MD)
    expect(zipped()[0][1].map(inOut)).toEqual([
      'result.json', 'report.md', 'report.html', 'report.junit.xml', 'verdict.json'
    ])

    // Without invalid-measurement in fail-on, the same run passes the step, and says so.
    core.reset()
    inputs = { ...inputs, 'fail-on': 'slo' }
    engine({ runCode: 5, doc: invalid, result: JSON.stringify({ spec: { name: 'api' }, health: { valid: false, problems } }) })
    await run()
    expect(core.setFailed).not.toHaveBeenCalled()
    expect(core.summaryWritten[0]).toContain('This step does not fail for it (fail-on: slo).')
  })

  it('an invalid measurement on a push is left out of the history window it carries on', async () => {
    const result = (valid: boolean) => JSON.stringify({ spec: { name: 'api' }, health: { valid, problems: valid ? [] : ['dropped'] } })
    repository([{ id: 400, history: { 'run-400.json': result(true) } }])
    inputs = { ...inputs, 'fail-on': 'slo' }
    engine({ runCode: 5, doc: verdictDoc({ verdict: 'invalid_measurement', exit_code: 5 }), result: result(false) })
    await run()
    expect(core.setFailed).not.toHaveBeenCalled()
    // Reported alone (no trend over a window it is not in); the window carried on as it was.
    expect(commands()[1]).toBe('report TEMP/loadgate/loadgate/result.json --format md --output TEMP/loadgate/loadgate/report.md')
    const files = zipped()[0][1].map(inOut)
    expect(files.filter((f) => f.startsWith('history/'))).toEqual(['history/run-400.json'])
    expect(core.info).toHaveBeenCalledWith("History window: 1 result(s) kept in the artifact's history/ (not this run's: its measurement is invalid)")
    expect(core.summaryWritten[0]).toContain("This result is left out of the branch's history window.")
  })

  it('a pull request passes over a baseline run whose measurement was invalid', async () => {
    event('pull_request', { pull_request: { number: 7, base: { ref: 'main' }, head: { repo: { full_name: 'octo/shop' } } } })
    repository([{ id: 100 }, { id: 101 }])
    vi.mocked(downloadResult).mockImplementation(async (_id, from, dir) => {
      writeFileSync(join(dir, 'result.json'), JSON.stringify({ spec: { name: 'api' }, health: { valid: from.runId !== 101, problems: [] } }))
      return join(dir, 'result.json')
    })
    engine({ doc: compared(['unchanged']) })
    await run()
    expect(vi.mocked(downloadResult).mock.calls.map(([, from]) => from.runId)).toEqual([101, 100])
    expect(core.info).toHaveBeenCalledWith('Run #101 (https://github.com/octo/shop/actions/runs/101) holds an invalid measurement: not a baseline; looking further back.')
    expect(core.summaryWritten[0]).toMatch(/^> Baseline: \[run #100\]/)
    expect(core.setFailed).not.toHaveBeenCalled()
  })

  it('publishes a run the engine could not carry out (exit 3), with its message and what to do, then fails whatever fail-on says', async () => {
    event('pull_request', { pull_request: { number: 7, base: { ref: 'main' }, head: { repo: { full_name: 'octo/shop' } } } })
    inputs = { ...inputs, 'fail-on': 'none', comment: 'on-failure' }
    engine({ doc: verdictDoc() })
    const stderr = 'the service says: secret=hunter2\nloadgate: starting service `./server`\nloadgate: error: cannot start service `./server`: No such file or directory (os error 2)\n'
    vi.mocked(invoke).mockResolvedValueOnce({ code: 3, stderr })
    await run()
    // The step's message quotes the engine's error only, never the service's output.
    expect(core.setFailed.mock.calls).toEqual([
      ['loadgate run: the run could not be carried out (exit code 3):\nloadgate: error: cannot start service `./server`: No such file or directory (os error 2)']
    ])
    expect(commands()).toHaveLength(1) // no report: there is no result
    const [summary] = core.summaryWritten
    expect(summary).toMatch(/^> Not measured: `loadgate run` could not carry out the run \(exit code 3\)/)
    expect(summary).toContain('### ⚠️ loadgate perf/api.yaml: the run could not be carried out')
    expect(summary).toContain('```text\nloadgate: error: cannot start service `./server`: No such file or directory (os error 2)\n```')
    expect(summary).toContain('What to do: ')
    // Only the engine's error lines: the service's own output (sharing its stderr) is not quoted.
    expect(summary).not.toContain('hunter2')
    // Nothing measured: no HTML report to link to; the comment links to the uploaded artifact.
    expect(summary).toContain(`${links(500).split(' · [HTML')[0]}\n\n###`)
    const linked = summary.replace('runs/500#artifacts', 'runs/500/artifacts/1')
    expect(vi.mocked(upsertComment).mock.calls[0][1]).toMatchObject({ issueNumber: 7, create: true, body: `<!-- loadgate-comment: perf.yml/gate/loadgate -->\n${linked}` })
    const files = zipped()[0][1].map(inOut)
    expect(files).toEqual(['report.md', 'engine.log', 'comment.md', 'pull-request.json'])
    expect(readFileSync(outFile('engine.log'), 'utf8')).toBe(stderr)
    expect(outputs()).toEqual({
      verdict: 'fail',
      slo: '',
      regression: '',
      result: '',
      'report-markdown': join(temp, 'loadgate', 'loadgate', 'report.md'),
      'report-html': '',
      'report-junit': '',
      rps: '',
      'p95-us': '',
      'p99-us': '',
      'error-rate': '',
      'comment-url': 'https://github.test/c/1',
      engine: ENGINE,
      'history-dir': ''
    })
  })

  it('stops at an invalid input before getting the engine', async () => {
    inputs = { ...inputs, 'fail-on': 'latency' }
    await run()
    expect(core.setFailed.mock.calls).toEqual([
      ['input `fail-on` is `latency`; use `none` or a list of `slo`, `regression`, `invalid-measurement` (e.g. `slo, regression`)']
    ])
    expect(acquireEngine).not.toHaveBeenCalled()
  })

  it('refuses a verdict document it cannot read', async () => {
    engine({ doc: { ...verdictDoc(), verdict_version: 2 } as unknown as LoadgateVerdict })
    await run()
    expect(core.setFailed.mock.calls).toEqual([[expect.stringMatching(/verdict\.json is not a loadgate verdict of verdict_version 1 \(verdict_version: 2\)$/)]])
    expect(core.setOutput).not.toHaveBeenCalled()
  })
})

describe('main, the history window', () => {
  const out = 'TEMP/loadgate/loadgate'
  const uploaded = () => zipped()[0][1].map(inOut)

  it('a push carries on the previous run\'s window of this spec, adds its result, and reports the trend over it', async () => {
    const api = JSON.stringify({ spec: { name: 'api' } })
    repository([{ id: 400, history: { 'run-300.json': api, 'run-399.json': JSON.stringify({ spec: { name: 'old' } }), 'run-400.json': api } }])
    engine({ doc: verdictDoc(), result: api })
    await run()
    expect(core.setFailed).not.toHaveBeenCalled()
    expect(commands()).toEqual([
      `run WS/perf/api.yaml --out ${out}/result.json`,
      `report ${out}/history --format md --output ${out}/report.md`,
      `report ${out}/history --format html --output ${out}/report.html`,
      `report ${out}/history --format junit --output ${out}/report.junit.xml --spec perf/api.yaml`,
      `report ${out}/history --format json --output ${out}/verdict.json --spec WS/perf/api.yaml`
    ])
    expect(vi.mocked(downloadResult).mock.calls.map(([id, from, dir]) => [id, from.runId, shorten(dir)])).toEqual([[4000, 400, `${out}/previous`]])
    expect(core.info).toHaveBeenCalledWith('History window carried on from run #400 (https://github.com/octo/shop/actions/runs/400), the previous successful run of perf.yml on main.')
    // run-399 is of another spec (renamed since): left behind.
    expect(uploaded()).toEqual(['result.json', 'report.md', 'report.html', 'report.junit.xml', 'verdict.json', 'history/run-300.json', 'history/run-400.json', 'history/run-500.json'])
    expect(readFileSync(outFile('history', 'run-500.json'), 'utf8')).toBe(api)
  })

  it("a pull request passes the baseline artifact's history to every report beside the baseline", async () => {
    event('pull_request', { pull_request: { number: 7, base: { ref: 'main' }, head: { repo: { full_name: 'octo/shop' } } } })
    repository([{ id: 100, history: { 'run-90.json': 'a', 'run-100.json': 'b' } }])
    engine({ doc: compared(['unchanged']) })
    await run()
    expect(core.setFailed).not.toHaveBeenCalled()
    const against = `--baseline ${out}/baseline/result.json --baseline-history ${out}/baseline/history`
    expect(commands().slice(1)).toEqual([
      `report ${out}/result.json ${against} --format md --output ${out}/report.md`,
      `report ${out}/result.json ${against} --format html --output ${out}/report.html`,
      `report ${out}/result.json ${against} --format junit --output ${out}/report.junit.xml --spec perf/api.yaml`,
      `report ${out}/result.json ${against} --format json --output ${out}/verdict.json --spec WS/perf/api.yaml`,
      // The base branch's trend, for the line above the report: its history window on its own.
      `report ${out}/baseline/history --format json --output ${out}/base-trend.json`
    ])
    // A pull request carries no window of its own.
    expect(uploaded()).not.toContainEqual(expect.stringMatching(/^history\//))
  })

  it('a history the engine refuses is left out, and the baseline is still compared', async () => {
    event('pull_request', { pull_request: { number: 7, base: { ref: 'main' }, head: { repo: { full_name: 'octo/shop' } } } })
    repository([{ id: 100, history: { 'run-90.json': 'not a result' } }])
    engine({ doc: compared(['unchanged']), refuseHistory: true })
    await run()
    expect(core.setFailed).not.toHaveBeenCalled()
    expect(commands().slice(1).map((c) => c.replace(/ --format .*/, ''))).toEqual([
      `report ${out}/result.json --baseline ${out}/baseline/result.json --baseline-history ${out}/baseline/history`,
      ...Array(4).fill(`report ${out}/result.json --baseline ${out}/baseline/result.json`)
    ])
    expect(core.warning).toHaveBeenCalledWith(expect.stringMatching(/^The baseline's history cannot be used: loadgate: error: .*run-90\.json` is not a loadgate result/))
    expect(outputs()).toMatchObject({ regression: 'unchanged' })
    expect(core.summaryWritten[0]).toMatch(
      /^> Baseline: \[run #100\]\(https:\/\/github.com\/octo\/shop\/actions\/runs\/100\) \(push, 100aaaa\), the newest successful run of perf.yml on main\. Its history is not used \(the engine says: `\S+\/baseline\/history\/run-90\.json` is not a loadgate result: no `result_version`\)\.\n/
    )
  })

  it('a schedule compares with the previous scheduled run and carries on the newest run on the branch, downloading each once', async () => {
    vi.stubEnv('GITHUB_EVENT_NAME', 'schedule')
    repository([
      { id: 300, event: 'schedule', history: { 'run-300.json': 'x' } },
      { id: 400, event: 'push', history: { 'run-300.json': 'x', 'run-400.json': 'y' } }
    ])
    engine({ doc: compared(['unchanged']) })
    await run()
    expect(commands()[1]).toBe(
      `report ${out}/history --baseline ${out}/baseline/result.json --baseline-history ${out}/baseline/history --format md --output ${out}/report.md`
    )
    expect(vi.mocked(downloadResult).mock.calls.map(([, from]) => from.runId)).toEqual([300, 400])
    expect(uploaded().filter((f) => f.startsWith('history/'))).toEqual(['history/run-300.json', 'history/run-400.json', 'history/run-500.json'])

    // When the previous run on the branch is the baseline, its artifact is downloaded once.
    core.reset()
    vi.mocked(downloadResult).mockClear()
    vi.mocked(uploadArtifact).mockClear()
    repository([{ id: 300, event: 'schedule', history: { 'run-300.json': 'x' } }])
    engine({ doc: compared(['unchanged']) })
    await run()
    expect(vi.mocked(downloadResult).mock.calls.map(([, from]) => from.runId)).toEqual([300])
    expect(uploaded().filter((f) => f.startsWith('history/'))).toEqual(['history/run-300.json', 'history/run-500.json'])
  })

  it('baseline: none looks nothing up, and the window starts again with this result', async () => {
    inputs = { ...inputs, baseline: 'none' }
    engine({ doc: verdictDoc() })
    await run()
    expect(downloadResult).not.toHaveBeenCalled()
    expect(core.info).toHaveBeenCalledWith('No history window carried on: the `baseline` input is not `auto`, so earlier runs are not looked up.')
    expect(uploaded()).toContain('history/run-500.json')
  })
})

describe('main, mode: paired', () => {
  const repo = origin({ base: { 'perf/api.yaml': 'version: 1\n' }, head: { 'perf/api.yaml': 'version: 1\n# head\n' } })
  let builds: string

  beforeEach(() => {
    ws = checkout(repo)
    vi.stubEnv('GITHUB_WORKSPACE', ws)
    builds = join(temp, 'builds.log')
    vi.stubEnv('BUILDS_LOG', builds)
    event('pull_request', { pull_request: { number: 7, base: { ref: 'main' } }, repository: { default_branch: 'main' } })
    // No REST call is expected: any would fail here.
    vi.mocked(github.getOctokit).mockReturnValue({} as unknown as ReturnType<typeof github.getOctokit>)
    inputs = { ...inputs, mode: 'paired', build: 'echo "$PWD $(git rev-parse HEAD)" >> "$BUILDS_LOG"', args: '--quiet' }
  })

  it('builds both checkouts, runs loadgate ab with each side\'s ROOT and PORT, and reports the ab document', async () => {
    engine({ doc: compared(['unchanged']) })
    await run()

    expect(core.setFailed).not.toHaveBeenCalled()
    const out = 'TEMP/loadgate/loadgate'
    const [ab, ...reports] = commands()
    const m = ab.match(
      /^ab WS\/perf\/api.yaml --baseline ROOT=(TEMP\/loadgate-base-\w+) --baseline PORT=(\d+) --candidate ROOT=WS --candidate PORT=(\d+) --out (\S+) --quiet$/
    )
    expect(m, ab).not.toBeNull()
    const [, worktree, baselinePort, candidatePort, abOut] = m!
    expect(baselinePort).not.toBe(candidatePort)
    expect(abOut).toBe(`${out}/ab.json`)
    // The reports come from the ab document alone: no --baseline, no lookup.
    expect(reports).toEqual([
      `report ${out}/ab.json --format md --output ${out}/report.md`,
      `report ${out}/ab.json --format html --output ${out}/report.html`,
      `report ${out}/ab.json --format junit --output ${out}/report.junit.xml --spec perf/api.yaml`,
      `report ${out}/ab.json --format json --output ${out}/verdict.json --spec WS/perf/api.yaml`
    ])
    expect(downloadResult).not.toHaveBeenCalled()
    // The candidate is built first, in the workspace; the baseline in the worktree, at the merge base.
    expect(readFileSync(builds, 'utf8')).toBe(`${ws} ${repo.commits.head}\n${worktree.replace('TEMP', temp)} ${repo.commits.base}\n`)
    expect(existsSync(worktree.replace('TEMP', temp))).toBe(false)
    expect(git(ws, 'worktree', 'list').split('\n')).toHaveLength(1)
    expect(core.group.mock.calls.map(([title]) => title.replaceAll(ws, 'WS').replaceAll(temp, 'TEMP'))).toEqual([
      'Find the base commit',
      `Build the candidate (${repo.commits.head.slice(0, 7)}) in WS`,
      `Build the baseline (${repo.commits.base.slice(0, 7)}) in ${worktree}`,
      'loadgate ab perf/api.yaml',
      'loadgate report',
      'Upload the artifact loadgate'
    ])
    const note = `> Paired run: this commit (${repo.commits.head.slice(0, 7)}) against ${repo.commits.base.slice(0, 7)}, its merge base with main, both built and loaded at the same time on this runner.`
    expect(core.summaryWritten).toEqual([`${note}\n\n${links(500)}\n\n${MD}`])
    expect(outputs()).toMatchObject({ verdict: 'pass', regression: 'unchanged', result: join(temp, 'loadgate', 'loadgate', 'ab.json') })
    const files = zipped()[0][1].map(inOut)
    expect(files).toEqual(['ab.json', 'report.md', 'report.html', 'report.junit.xml', 'verdict.json', 'comment.md', 'pull-request.json'])
    expect(vi.mocked(upsertComment).mock.calls[0][1]).toMatchObject({ issueNumber: 7, create: true })
  })

  it('reports a regression that loadgate ab found (exit 4) and fails the step by fail-on', async () => {
    engine({ runCode: 4, doc: compared(['regressed'], { verdict: 'regressed', exit_code: 4 }) })
    await run()
    expect(commands()).toHaveLength(5)
    expect(outputs()).toMatchObject({ verdict: 'fail', regression: 'regressed' })
    expect(core.setFailed.mock.calls).toEqual([['loadgate: a regression against the baseline was found (fail-on: slo, regression, invalid-measurement)']])
  })

  it('publishes an ab run the engine could not carry out, fails, and removes the worktree', async () => {
    engine({ doc: verdictDoc() })
    vi.mocked(invoke).mockResolvedValueOnce({ code: 3, stderr: 'loadgate: error: the baseline side: the service did not become ready\n' })
    await run()
    expect(core.setFailed.mock.calls).toEqual([
      ['loadgate ab: the run could not be carried out (exit code 3):\nloadgate: error: the baseline side: the service did not become ready']
    ])
    expect(commands()).toHaveLength(1)
    expect(git(ws, 'worktree', 'list').split('\n')).toHaveLength(1)
    expect(core.summaryWritten[0]).toContain('`loadgate ab` stopped with exit code 3 before measuring anything')
    expect(core.summaryWritten[0]).toContain('loadgate: error: the baseline side: the service did not become ready')
    expect(zipped()[0][1].map(inOut)).toEqual([
      'report.md', 'engine.log', 'comment.md', 'pull-request.json'
    ])
  })

  it('stops at a failed build before the load, and removes the worktree', async () => {
    inputs = { ...inputs, build: 'test "$(git rev-parse HEAD)" != ' + repo.commits.base }
    engine({ doc: verdictDoc() })
    await run()
    expect(core.setFailed.mock.calls).toEqual([
      [expect.stringMatching(new RegExp(`^input \`build\` failed for the baseline \\(${repo.commits.base.slice(0, 7)}\\) with exit code 1`))]
    ])
    expect(invoke).not.toHaveBeenCalled()
    expect(git(ws, 'worktree', 'list').split('\n')).toHaveLength(1)
  })

  it('refuses an event without a pull request before getting the engine', async () => {
    event('push', { repository: { default_branch: 'main' } })
    await run()
    expect(core.setFailed.mock.calls).toEqual([[expect.stringMatching(/^mode: paired compares a pull request with its base branch, and a `push` event has none/)]])
    expect(acquireEngine).not.toHaveBeenCalled()
  })
})

describe('main, shards', () => {
  const out = 'TEMP/loadgate/loadgate'

  it('a shard runs its share with the start time, uploads result and report under its own name, and judges nothing', async () => {
    event('pull_request', { pull_request: { number: 7, base: { ref: 'main' }, head: { repo: { full_name: 'octo/shop' } } } })
    inputs = { ...inputs, shard: '2/4', 'start-at': '2026-11-24T10:00:00Z', args: '--quiet' }
    engine({ doc: compared(['unchanged']) })
    await run()
    expect(core.setFailed).not.toHaveBeenCalled()
    expect(commands()).toEqual([
      `run WS/perf/api.yaml --out ${out}/result.json --shard 2/4 --start-at 2026-11-24T10:00:00Z --quiet`,
      `report ${out}/result.json --format md --output ${out}/report.md`,
      `report ${out}/result.json --format json --output ${out}/verdict.json`
    ])
    const [name, files] = zipped()[0]
    expect(name).toBe('loadgate-shard-2-of-4')
    expect(files.map(inOut)).toEqual(['result.json', 'report.md'])
    expect(zipped()).toHaveLength(1)
    expect(upsertComment).not.toHaveBeenCalled()
    expect(downloadResult).not.toHaveBeenCalled() // no baseline looked up
    expect(core.summaryWritten).toEqual([
      '**loadgate perf/api.yaml, shard 2 of 4**: rps 1,234.6/s, p95 900 µs, p99 2.10 ms, error rate 0.200%, requests 4,938. Uploaded as the artifact `loadgate-shard-2-of-4`; the SLOs and the comparison with the baseline are judged on the merged result (the `mode: merge` step).\n'
    ])
    expect(outputs()).toMatchObject({ verdict: '', slo: '', regression: '', rps: '1234.5678', 'p95-us': '900', 'report-html': '', 'comment-url': '' })
  })

  it('start-at without a shard starts the whole load at that time, and the run is compared as usual', async () => {
    inputs = { ...inputs, 'start-at': '+30s' }
    engine({ doc: verdictDoc() })
    await run()
    expect(core.setFailed).not.toHaveBeenCalled()
    expect(commands()[0]).toBe(`run WS/perf/api.yaml --out ${out}/result.json --start-at +30s`)
    expect(commands()).toHaveLength(5)
    expect(zipped().map(([name]) => name)).toEqual(['loadgate'])
  })

  it('a shard that could not run uploads its report and engine.log under its name and fails; no comment', async () => {
    event('pull_request', { pull_request: { number: 7, base: { ref: 'main' }, head: { repo: { full_name: 'octo/shop' } } } })
    inputs = { ...inputs, shard: '1/2' }
    engine({ doc: verdictDoc() })
    vi.mocked(invoke).mockResolvedValueOnce({ code: 3, stderr: 'loadgate: error: target `127.0.0.1:1` is unreachable\n' })
    await run()
    expect(core.setFailed.mock.calls).toEqual([['loadgate run: the run could not be carried out (exit code 3):\nloadgate: error: target `127.0.0.1:1` is unreachable']])
    const [name, files] = zipped()[0]
    expect([name, files.map(inOut)]).toEqual(['loadgate-shard-1-of-2', ['report.md', 'engine.log']])
    expect(core.summaryWritten[0]).toContain('### ⚠️ loadgate perf/api.yaml: the run could not be carried out')
    expect(upsertComment).not.toHaveBeenCalled()
  })

  it('a shard fails on an engine that refused its command line (exit 2), with the engine message', async () => {
    inputs = { ...inputs, shard: '1/2', 'start-at': '2020-01-01T00:00:00Z' }
    engine({ doc: verdictDoc() })
    vi.mocked(invoke).mockResolvedValueOnce({ code: 2, stderr: 'loadgate: error: --start-at 2020-01-01T00:00:00Z is past by more than the warmup\n' })
    await run()
    expect(core.setFailed.mock.calls).toEqual([
      ['loadgate run: the spec or the command line is invalid (exit code 2):\nloadgate: error: --start-at 2020-01-01T00:00:00Z is past by more than the warmup']
    ])
    expect(uploadArtifact).not.toHaveBeenCalled()
  })
})

describe('main, mode: merge', () => {
  const out = 'TEMP/loadgate/loadgate'

  /** This run's artifacts (listed page by page), and what each download holds. */
  function thisRun(artifacts: Array<{ id: number; name: string; result?: boolean }>) {
    const pages = [artifacts.slice(0, 2), artifacts.slice(2)]
    vi.mocked(github.getOctokit).mockReturnValue({
      paginate: async (_route: unknown, params: { run_id: number }) => {
        expect(params.run_id).toBe(500)
        return pages.flatMap((p) => p.map((a) => ({ id: a.id, name: a.name, expired: false })))
      },
      rest: {
        actions: {
          listWorkflowRuns: async () => ({ data: { workflow_runs: [] } }),
          listWorkflowRunArtifacts: async () => ({ data: { artifacts: [] } })
        }
      }
    } as unknown as ReturnType<typeof github.getOctokit>)
    vi.mocked(downloadArtifact).mockImplementation(async (id, from, dir) => {
      expect(from).toMatchObject({ runId: 500, owner: 'octo', repo: 'shop', token: 'ghs_token' })
      const a = artifacts.find((x) => x.id === id)!
      writeFileSync(join(dir, a.result === false ? 'engine.log' : 'result.json'), 'opaque')
    })
  }

  it("downloads this run's shards, merges them, then reports, uploads and comments as stored mode", async () => {
    event('pull_request', { pull_request: { number: 7, base: { ref: 'main' }, head: { repo: { full_name: 'octo/shop' } } } })
    inputs = { ...inputs, mode: 'merge', 'allow-missing': 'true' }
    thisRun([
      { id: 3, name: 'loadgate-shard-2-of-3' },
      { id: 1, name: 'loadgate-shard-1-of-3' },
      { id: 9, name: 'coverage' },
      { id: 4, name: 'loadgate-shard-3-of-3', result: false }
    ])
    engine({ doc: verdictDoc() })
    await run()
    expect(core.setFailed).not.toHaveBeenCalled()
    expect(vi.mocked(downloadArtifact).mock.calls.map(([id]) => id)).toEqual([1, 3, 4])
    expect(core.warning).toHaveBeenCalledWith(
      'The artifact loadgate-shard-3-of-3 holds no result.json: shard 3 of 3 could not run (its engine.log says why); it counts as missing.'
    )
    const shards = `${out}/shards`
    expect(commands()[0]).toBe(
      `merge ${shards}/loadgate-shard-1-of-3/result.json ${shards}/loadgate-shard-2-of-3/result.json --out ${out}/result.json --allow-missing`
    )
    expect(commands().slice(1).map((c) => c.split(' --format ')[1].split(' ')[0])).toEqual(['md', 'html', 'junit', 'json'])
    expect(zipped().map(([name]) => name)).toEqual(['loadgate'])
    expect(vi.mocked(upsertComment).mock.calls[0][1]).toMatchObject({ issueNumber: 7, mark: '<!-- loadgate-comment: perf.yml/gate/loadgate -->' })
    expect(outputs()).toMatchObject({ verdict: 'pass', result: join(temp, 'loadgate', 'loadgate', 'result.json') })
  })

  it('reports a merged run whose SLO failed (merge exits 1) as stored mode does, and fails by fail-on', async () => {
    inputs = { ...inputs, mode: 'merge' }
    thisRun([{ id: 1, name: 'loadgate-shard-1-of-2' }, { id: 2, name: 'loadgate-shard-2-of-2' }])
    engine({ runCode: 1, doc: verdictDoc({ verdict: 'slo_failed', exit_code: 1, slo_passed: false, slo: [slo(false)] }) })
    await run()
    expect(commands()).toHaveLength(5) // merge, then the four reports
    expect(zipped().map(([name]) => name)).toEqual(['loadgate'])
    expect(core.setFailed.mock.calls).toEqual([[expect.stringMatching(/^loadgate: .*SLO.* \(fail-on: slo, regression, invalid-measurement\)$/)]])
  })

  it('publishes why the shards could not be merged (the engine refused them) and fails whatever fail-on says', async () => {
    inputs = { ...inputs, mode: 'merge', 'fail-on': 'none' }
    thisRun([{ id: 1, name: 'loadgate-shard-1-of-2' }])
    engine({ doc: verdictDoc() })
    const stderr = 'loadgate: error: shard 2 of 2 is missing (give every shard, or --allow-missing)\n'
    vi.mocked(invoke).mockResolvedValueOnce({ code: 2, stderr })
    await run()
    expect(core.setFailed.mock.calls).toEqual([[`loadgate merge: the shards' results cannot be merged (exit code 2):\n${stderr.trimEnd()}`]])
    expect(commands()).toHaveLength(1)
    const [summary] = core.summaryWritten
    expect(summary).toMatch(/^> Not merged: there is no merged result, so nothing was compared, and this step fails whatever `fail-on` says\./)
    expect(summary).toContain(`\`\`\`text\n${stderr.trimEnd()}\n\`\`\``)
    expect(summary).toContain('set `allow-missing: true` on this step')
    const files = zipped()[0][1].map(inOut)
    expect(files).toEqual(['report.md', 'engine.log'])
  })

  it('says which permission the token lacks when it may not list the run artifacts', async () => {
    inputs = { ...inputs, mode: 'merge' }
    vi.mocked(github.getOctokit).mockReturnValue({
      paginate: async () => {
        throw Object.assign(new Error('Resource not accessible by integration'), { status: 403 })
      },
      rest: { actions: { listWorkflowRunArtifacts: async () => ({ data: { artifacts: [] } }) } }
    } as unknown as ReturnType<typeof github.getOctokit>)
    engine({ doc: verdictDoc() })
    await run()
    expect(core.setFailed.mock.calls).toEqual([
      [
        'cannot list the artifacts of this workflow run (run 500): Resource not accessible by integration. The token needs `actions: read` permission (docs/action.md, "Permissions").'
      ]
    ])
    expect(commands()).toEqual([])
  })

  it('with no shard artifact in the run, says what to do and fails without calling the engine', async () => {
    inputs = { ...inputs, mode: 'merge' }
    thisRun([{ id: 9, name: 'coverage' }, { id: 8, name: 'loadgate' }])
    engine({ doc: verdictDoc() })
    await run()
    expect(core.setFailed.mock.calls).toEqual([
      ['mode: merge: no artifact named loadgate-shard-K-of-N in this workflow run (run 500): nothing to merge (see the job summary)']
    ])
    expect(commands()).toEqual([])
    expect(downloadArtifact).not.toHaveBeenCalled()
    expect(core.summaryWritten[0]).toContain('found no artifact named `loadgate-shard-K-of-N` in this workflow run (run 500; it has 2 other artifact(s))')
    expect(zipped()[0][1].map(inOut)).toEqual(['report.md'])
  })
})
