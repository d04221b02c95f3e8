/**
 * What the action needs to know about the workflow run it is part of, read once from the
 * runner's environment and the event payload into plain values.
 */

export interface PullRequest {
  number: number
  /** The branch the pull request merges into: where its baseline comes from. */
  baseRef: string
  /** The head lives in another repository: the workflow token is read-only then. */
  fromFork: boolean
}

export interface RunContext {
  eventName: string
  owner: string
  repo: string
  runId: number
  /** The branch or tag this run is for (`GITHUB_REF_NAME`); for pull requests, `N/merge`. */
  refName: string
  defaultBranch: string | undefined
  /** The workflow's file name (`perf.yml`), from `GITHUB_WORKFLOW_REF`; the API accepts it as the workflow id. */
  workflowFile: string | undefined
  workflowName: string
  job: string
  /** The run's page, for links in the report. */
  runUrl: string
  /** `owner/name` of the action when used from another repository; empty for `uses: ./`. */
  actionRepository: string
  pullRequest: PullRequest | undefined
}

type Env = Record<string, string | undefined>

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Payload = Record<string, any>

export function readContext(env: Env, payload: Payload): RunContext {
  const [owner = '', repo = ''] = (env.GITHUB_REPOSITORY ?? '').split('/')
  if (owner === '' || repo === '') {
    throw new Error('GITHUB_REPOSITORY is not set: the action must run inside a GitHub Actions workflow')
  }
  const serverUrl = env.GITHUB_SERVER_URL || 'https://github.com'
  const runId = Number(env.GITHUB_RUN_ID ?? '0')

  let pullRequest: PullRequest | undefined
  const pr = payload.pull_request
  if (pr && typeof pr.number === 'number') {
    const headRepo: string | undefined = pr.head?.repo?.full_name
    pullRequest = {
      number: pr.number,
      baseRef: pr.base?.ref ?? env.GITHUB_BASE_REF ?? '',
      fromFork: headRepo !== undefined && headRepo !== `${owner}/${repo}`
    }
  }

  return {
    eventName: env.GITHUB_EVENT_NAME ?? '',
    owner,
    repo,
    runId,
    refName: env.GITHUB_REF_NAME ?? '',
    defaultBranch: payload.repository?.default_branch,
    workflowFile: workflowFile(env.GITHUB_WORKFLOW_REF ?? '', `${owner}/${repo}`),
    workflowName: env.GITHUB_WORKFLOW ?? '',
    job: env.GITHUB_JOB ?? '',
    runUrl: `${serverUrl}/${owner}/${repo}/actions/runs/${runId}`,
    actionRepository: env.GITHUB_ACTION_REPOSITORY ?? '',
    pullRequest
  }
}

/** `octo/hello/.github/workflows/perf.yml@refs/heads/main` -> `perf.yml`. */
export function workflowFile(workflowRef: string, repository: string): string | undefined {
  let rest = workflowRef
  if (rest.startsWith(`${repository}/`)) rest = rest.slice(repository.length + 1)
  const path = rest.split('@')[0]
  const name = path.split('/').pop()
  return name && /\.ya?ml$/.test(name) ? name : undefined
}
