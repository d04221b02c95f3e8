/**
 * Where the baseline comes from: which earlier run of this workflow holds the result that the
 * current one is compared with, and which one holds the history window a run on a branch
 * carries on. Deciding (`planBaseline`, `planHistory`, `selectRuns`) is pure; looking up the
 * runs and their artifacts (`findBaselineArtifact`) goes through the REST API.
 */
import type { BaselineSource } from './inputs.js'
import type { RunContext } from './context.js'
import type { GitHubApi } from './github.js'

/** Search earlier successful runs of `workflow` on `branch` triggered by one of `events`. */
export interface SearchPlan {
  kind: 'search'
  workflow: string
  branch: string
  events: string[]
  /** What is searched for, for notes: `the newest successful run of perf.yml on main`. */
  describe: string
}

/** What to do about a baseline for this run. */
export type BaselinePlan = { kind: 'none'; reason: string } | { kind: 'path'; path: string } | SearchPlan

/** Events whose runs on a branch are trusted as baselines: code that is on the branch. */
const BRANCH_EVENTS = ['push', 'schedule', 'workflow_dispatch']

export function planBaseline(source: BaselineSource, ctx: RunContext): BaselinePlan {
  if (source.kind === 'none') return { kind: 'none', reason: 'the `baseline` input is `none`' }
  if (source.kind === 'path') return { kind: 'path', path: source.path }

  const workflow = ctx.workflowFile
  if (workflow === undefined) {
    return {
      kind: 'none',
      reason: 'GITHUB_WORKFLOW_REF does not name a workflow file, so earlier runs cannot be looked up'
    }
  }
  if (ctx.pullRequest !== undefined) {
    const branch = ctx.pullRequest.baseRef
    return {
      kind: 'search',
      workflow,
      branch,
      events: BRANCH_EVENTS,
      describe: `the newest successful run of ${workflow} on ${branch}`
    }
  }
  if (ctx.eventName === 'schedule') {
    return {
      kind: 'search',
      workflow,
      branch: ctx.refName,
      events: ['schedule'],
      describe: `the previous successful scheduled run of ${workflow} on ${ctx.refName}`
    }
  }
  const becomes =
    ctx.eventName === 'push' && ctx.refName === ctx.defaultBranch
      ? `; this result becomes the baseline for pull requests into ${ctx.refName}`
      : ''
  return { kind: 'none', reason: `a \`${ctx.eventName}\` event is not compared${becomes}` }
}

/**
 * Whether this run's artifact carries the history window (`history/`): runs on a branch by the
 * events whose results are baselines (push, schedule, workflow_dispatch), never pull requests.
 */
export function carriesHistory(ctx: RunContext): boolean {
  return ctx.pullRequest === undefined && BRANCH_EVENTS.includes(ctx.eventName)
}

/**
 * Where a run that carries the history window (`carriesHistory`) finds the window it carries
 * on: the previous successful run of this workflow on its branch by any of the branch events,
 * the same run a pull request into that branch takes as its baseline. Only with `baseline:
 * auto`: `none` or a path looks nothing up, and the window starts again with this result.
 */
export function planHistory(source: BaselineSource, ctx: RunContext): SearchPlan | { kind: 'none'; reason: string } {
  if (source.kind !== 'auto') return { kind: 'none', reason: 'the `baseline` input is not `auto`, so earlier runs are not looked up' }
  const workflow = ctx.workflowFile
  if (workflow === undefined) {
    return { kind: 'none', reason: 'GITHUB_WORKFLOW_REF does not name a workflow file, so earlier runs cannot be looked up' }
  }
  return {
    kind: 'search',
    workflow,
    branch: ctx.refName,
    events: BRANCH_EVENTS,
    describe: `the previous successful run of ${workflow} on ${ctx.refName}`
  }
}

/** The fields of a workflow run (REST `GET .../actions/workflows/{id}/runs`) that selection reads. */
export interface WorkflowRun {
  id: number
  run_number: number
  event: string
  status: string | null
  conclusion: string | null
  head_branch: string | null
  head_sha: string
  created_at: string
  html_url: string
  head_repository?: { full_name?: string } | null
}

export interface RunFilter {
  branch: string
  events: string[]
  /** `owner/name`: runs whose code came from another repository (forks) are never baselines. */
  repository: string
  /** The current run, which is never its own baseline. */
  excludeRunId: number
}

/** The runs that may hold the baseline, newest first. */
export function selectRuns(runs: WorkflowRun[], f: RunFilter): WorkflowRun[] {
  return runs
    .filter(
      (r) =>
        r.id !== f.excludeRunId &&
        r.status === 'completed' &&
        r.conclusion === 'success' &&
        r.head_branch === f.branch &&
        f.events.includes(r.event) &&
        (r.head_repository?.full_name === undefined || r.head_repository.full_name === f.repository)
    )
    .sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at) || b.run_number - a.run_number)
}

export interface BaselineArtifact {
  run: WorkflowRun
  artifactId: number
}

/** How many candidate runs are asked for their artifact before giving up. */
const MAX_CANDIDATES = 5

/**
 * The newest run allowed by `plan`, other than those in `skip` (run ids), that still has an
 * unexpired artifact named `artifactName`, or `undefined` when there is none yet (not an error:
 * the first run on a branch has no baseline).
 */
export async function findBaselineArtifact(
  api: GitHubApi,
  ctx: RunContext,
  plan: SearchPlan,
  artifactName: string,
  log: (line: string) => void,
  skip: ReadonlySet<number> = new Set()
): Promise<BaselineArtifact | undefined> {
  const { data } = await api.rest.actions.listWorkflowRuns({
    owner: ctx.owner,
    repo: ctx.repo,
    workflow_id: plan.workflow,
    branch: plan.branch,
    status: 'success',
    exclude_pull_requests: true,
    per_page: 50,
    ...(plan.events.length === 1 ? { event: plan.events[0] } : {})
  })
  const candidates = selectRuns(data.workflow_runs as WorkflowRun[], {
    branch: plan.branch,
    events: plan.events,
    repository: `${ctx.owner}/${ctx.repo}`,
    excludeRunId: ctx.runId
  })
    .filter((r) => !skip.has(r.id))
    .slice(0, MAX_CANDIDATES)

  for (const run of candidates) {
    const { data: arts } = await api.rest.actions.listWorkflowRunArtifacts({
      owner: ctx.owner,
      repo: ctx.repo,
      run_id: run.id,
      name: artifactName,
      per_page: 10
    })
    const artifact = arts.artifacts.find((a) => a.name === artifactName && !a.expired)
    if (artifact) return { run, artifactId: artifact.id }
    log(`run #${run.run_number} (${run.html_url}) has no unexpired artifact named ${artifactName}`)
  }
  return undefined
}

/**
 * How many results the artifact of a run on a branch carries in `history/`: the trend of its
 * report, and the history (`--baseline-history`) whose level pull requests are judged against;
 * the engine's window (the review's 60–100 results).
 */
export const HISTORY_SIZE = 100

/** The history file of run `runId` inside the artifact. */
export function historyName(runId: number): string {
  return `run-${runId}.json`
}

/**
 * The window of results a run on a branch carries on: the newest `size - 1` of the previous run's
 * history files (`run-<id>.json`, oldest first by run id), to which the current result is added.
 * Other file names are dropped.
 */
export function historyWindow(previous: string[], size = HISTORY_SIZE): string[] {
  return previous
    .map((name) => ({ name, id: Number(name.match(/^run-(\d+)\.json$/)?.[1] ?? NaN) }))
    .filter((f) => Number.isSafeInteger(f.id))
    .sort((a, b) => a.id - b.id)
    .slice(-(size - 1))
    .map((f) => f.name)
}
