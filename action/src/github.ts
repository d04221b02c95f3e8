/** The REST client type and the error shapes the action tells apart. */
import type * as github from '@actions/github'

export type GitHubApi = ReturnType<typeof github.getOctokit>

/** The HTTP status of an Octokit request error, if it is one. */
export function httpStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status
  return typeof status === 'number' ? status : undefined
}
