/**
 * What the action needs to know about the workflow run it is part of, read once from
 * `github.context` (the runner's environment and the event payload) into plain values.
 */
import type { context } from '@actions/github'

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
  /** The commit this run is for (`GITHUB_SHA`); '' when unknown. */
  sha: string
  /** The server's address (`GITHUB_SERVER_URL`), e.g. `https://github.com`: repository and commit pages, and the git remote. */
  serverUrl: string
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

/**
 * What `readContext` takes from `@actions/github`'s `github.context`, which reads the runner's
 * `GITHUB_*` variables and the event payload (`GITHUB_EVENT_PATH`).
 */
export type GitHubContext = Pick<typeof context, 'eventName' | 'runId' | 'workflow' | 'job' | 'serverUrl' | 'payload' | 'repo'>

/**
 * The run's context from `github.context`, plus the four variables it does not read:
 * `GITHUB_REF_NAME`, `GITHUB_SHA`, `GITHUB_WORKFLOW_REF` and `GITHUB_ACTION_REPOSITORY`.
 */
export function readContext(gh: GitHubContext, env: Env): RunContext {
  let owner: string
  let repo: string
  try {
    ;({ owner, repo } = gh.repo)
  } catch {
    throw new Error('GITHUB_REPOSITORY is not set: the action must run inside a GitHub Actions workflow')
  }
  const payload = gh.payload
  let pullRequest: PullRequest | undefined
  const pr = payload.pull_request
  if (pr && typeof pr.number === 'number') {
    const headRepo: string | undefined = pr.head?.repo?.full_name
    pullRequest = {
      number: pr.number,
      baseRef: pr.base?.ref ?? '',
      fromFork: headRepo !== undefined && headRepo !== `${owner}/${repo}`
    }
  }
  const runId = Number.isSafeInteger(gh.runId) ? gh.runId : 0

  return {
    eventName: gh.eventName ?? '',
    owner,
    repo,
    runId,
    refName: env.GITHUB_REF_NAME ?? '',
    defaultBranch: payload.repository?.default_branch,
    sha: env.GITHUB_SHA ?? '',
    serverUrl: gh.serverUrl,
    workflowFile: workflowFile(env.GITHUB_WORKFLOW_REF ?? '', `${owner}/${repo}`),
    workflowName: gh.workflow ?? '',
    job: gh.job ?? '',
    runUrl: `${gh.serverUrl}/${owner}/${repo}/actions/runs/${runId}`,
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
