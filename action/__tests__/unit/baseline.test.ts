import { describe, expect, it } from 'vitest'
import { carriesHistory, historyName, historyWindow, planBaseline, planHistory, selectRuns, type WorkflowRun } from '../../src/baseline.js'
import { readContext, workflowFile, type GitHubContext, type RunContext } from '../../src/context.js'

const env = {
  GITHUB_REF_NAME: '7/merge',
  GITHUB_WORKFLOW_REF: 'octo/shop/.github/workflows/perf.yml@refs/pull/7/merge'
}
const prPayload = {
  pull_request: { number: 7, base: { ref: 'main' }, head: { repo: { full_name: 'octo/shop' } } },
  repository: { name: 'shop', owner: { login: 'octo' }, default_branch: 'main' }
}

/** `github.context`'s fields for a run of `perf` in octo/shop with this payload. */
function gh(payload: GitHubContext['payload']): GitHubContext {
  return { eventName: 'pull_request', runId: 42, workflow: 'perf', job: 'gate', serverUrl: 'https://github.com', payload, repo: { owner: 'octo', repo: 'shop' } }
}

function ctx(over: Partial<RunContext> = {}): RunContext {
  return { ...readContext(gh(prPayload), env), ...over }
}

describe('readContext', () => {
  it('reads a pull request from this repository', () => {
    const c = ctx()
    expect(c.pullRequest).toEqual({ number: 7, baseRef: 'main', fromFork: false })
    expect(c.workflowFile).toBe('perf.yml')
    expect(c.runUrl).toBe('https://github.com/octo/shop/actions/runs/42')
  })

  it('tells a pull request from a fork', () => {
    const payload = { ...prPayload, pull_request: { ...prPayload.pull_request, head: { repo: { full_name: 'eve/shop' } } } }
    expect(readContext(gh(payload), env).pullRequest?.fromFork).toBe(true)
  })

  it('refuses to run outside a workflow', () => {
    // What github.context.repo does without GITHUB_REPOSITORY and a repository in the payload.
    const outside = {
      ...gh({}),
      get repo(): GitHubContext['repo'] {
        throw new Error("context.repo requires a GITHUB_REPOSITORY environment variable like 'owner/repo'")
      }
    }
    expect(() => readContext(outside, {})).toThrow(/GITHUB_REPOSITORY is not set/)
  })
})

describe('workflowFile', () => {
  it.each([
    ['octo/shop/.github/workflows/perf.yml@refs/heads/main', 'perf.yml'],
    ['octo/shop/.github/workflows/nightly.yaml@refs/tags/v1', 'nightly.yaml'],
    ['', undefined],
    ['octo/shop/something', undefined]
  ])('%j -> %j', (ref, name) => {
    expect(workflowFile(ref, 'octo/shop')).toBe(name)
  })
})

describe('planBaseline', () => {
  it('searches the base branch for pull requests', () => {
    expect(planBaseline({ kind: 'auto' }, ctx())).toEqual({
      kind: 'search',
      workflow: 'perf.yml',
      branch: 'main',
      events: ['push', 'schedule', 'workflow_dispatch'],
      describe: 'the newest successful run of perf.yml on main'
    })
  })

  it('searches earlier scheduled runs on schedules', () => {
    const plan = planBaseline({ kind: 'auto' }, ctx({ eventName: 'schedule', refName: 'main', pullRequest: undefined }))
    expect(plan).toMatchObject({ kind: 'search', branch: 'main', events: ['schedule'] })
  })

  it('does not compare a push to the default branch: it becomes the baseline', () => {
    const plan = planBaseline({ kind: 'auto' }, ctx({ eventName: 'push', refName: 'main', pullRequest: undefined }))
    expect(plan).toEqual({
      kind: 'none',
      reason: 'a `push` event is not compared; this result becomes the baseline for pull requests into main'
    })
  })

  it('honours none and a path whatever the event', () => {
    expect(planBaseline({ kind: 'none' }, ctx())).toMatchObject({ kind: 'none' })
    expect(planBaseline({ kind: 'path', path: 'b.json' }, ctx())).toEqual({ kind: 'path', path: 'b.json' })
  })

  it('says why it cannot search without a workflow file', () => {
    expect(planBaseline({ kind: 'auto' }, ctx({ workflowFile: undefined }))).toMatchObject({
      kind: 'none',
      reason: expect.stringMatching(/GITHUB_WORKFLOW_REF/)
    })
  })
})

describe('the history window', () => {
  const onBranch = (eventName: string) => ctx({ eventName, refName: 'release-2', pullRequest: undefined })

  it('is carried by runs on a branch by push, schedule and workflow_dispatch, not by pull requests or other events', () => {
    expect(['push', 'schedule', 'workflow_dispatch'].map((e) => carriesHistory(onBranch(e)))).toEqual([true, true, true])
    expect(carriesHistory(ctx())).toBe(false)
    expect(carriesHistory(onBranch('release'))).toBe(false)
  })

  it.each(['push', 'schedule', 'workflow_dispatch'])('on %s, is carried on from the previous run on the branch by any branch event', (e) => {
    expect(planHistory({ kind: 'auto' }, onBranch(e))).toEqual({
      kind: 'search',
      workflow: 'perf.yml',
      branch: 'release-2',
      events: ['push', 'schedule', 'workflow_dispatch'],
      describe: 'the previous successful run of perf.yml on release-2'
    })
  })

  it('is not looked up unless the baseline input is auto, nor without a workflow file', () => {
    expect(planHistory({ kind: 'none' }, onBranch('push'))).toEqual({ kind: 'none', reason: 'the `baseline` input is not `auto`, so earlier runs are not looked up' })
    expect(planHistory({ kind: 'path', path: 'b.json' }, onBranch('push'))).toMatchObject({ kind: 'none' })
    expect(planHistory({ kind: 'auto' }, { ...onBranch('push'), workflowFile: undefined })).toMatchObject({
      kind: 'none',
      reason: expect.stringMatching(/GITHUB_WORKFLOW_REF/)
    })
  })
})

function run(over: Partial<WorkflowRun>): WorkflowRun {
  return {
    id: 1,
    run_number: 1,
    event: 'push',
    status: 'completed',
    conclusion: 'success',
    head_branch: 'main',
    head_sha: 'abc',
    created_at: '2026-01-01T00:00:00Z',
    html_url: 'https://github.com/octo/shop/actions/runs/1',
    head_repository: { full_name: 'octo/shop' },
    ...over
  }
}

describe('selectRuns', () => {
  const filter = { branch: 'main', events: ['push', 'schedule'], repository: 'octo/shop', excludeRunId: 42 }

  it('keeps successful runs on the branch from trusted events, newest first', () => {
    const runs = [
      run({ id: 1, created_at: '2026-01-01T00:00:00Z' }),
      run({ id: 2, created_at: '2026-01-03T00:00:00Z', event: 'schedule' }),
      run({ id: 3, created_at: '2026-01-02T00:00:00Z' })
    ]
    expect(selectRuns(runs, filter).map((r) => r.id)).toEqual([2, 3, 1])
  })

  it.each([
    ['failed', { conclusion: 'failure' }],
    ['still running', { status: 'in_progress', conclusion: null }],
    ['another branch', { head_branch: 'feature' }],
    ['a pull request event', { event: 'pull_request' }],
    ['from a fork whose branch is also called main', { head_repository: { full_name: 'eve/shop' } }],
    ['the current run', { id: 42 }]
  ])('drops a run that is %s', (_why, over) => {
    expect(selectRuns([run({ id: 5, ...over })], filter)).toEqual([])
  })

  it('breaks ties in time by run number', () => {
    const runs = [run({ id: 1, run_number: 8 }), run({ id: 2, run_number: 9 })]
    expect(selectRuns(runs, filter).map((r) => r.id)).toEqual([2, 1])
  })
})

describe('historyWindow', () => {
  it('keeps the newest size - 1 results by run id, oldest first, and nothing else', () => {
    const names = ['run-10.json', 'run-9.json', 'run-100.json', 'notes.txt', 'run-x.json', 'run-11.json']
    expect(historyWindow(names, 3)).toEqual(['run-11.json', 'run-100.json'])
    expect(historyWindow(names, 30)).toEqual(['run-9.json', 'run-10.json', 'run-11.json', 'run-100.json'])
    expect(historyWindow([], 30)).toEqual([])
  })

  it('names a result by its run', () => {
    expect(historyName(42)).toBe('run-42.json')
  })
})
