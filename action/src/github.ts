/** The REST client (retrying GitHub's passing failures) and the error shapes the action tells apart. */
import * as github from '@actions/github'
import { retry } from '@octokit/plugin-retry'
import { throttling } from '@octokit/plugin-throttling'

export type GitHubApi = ReturnType<typeof github.getOctokit>

/** The longest wait for a rate limit to pass, in seconds; a longer one is not waited for. */
const MAX_RATE_LIMIT_WAIT_S = 60

/** How many times a request that hit a rate limit is sent again. */
const RATE_LIMIT_RETRIES = 2

/**
 * The REST client for `token`: a server error (5xx) is retried (`@octokit/plugin-retry`: 3
 * times, after 1, 4 and 9 s), a rate limit, the secondary one included, waited for when it
 * ends within `MAX_RATE_LIMIT_WAIT_S` (`@octokit/plugin-throttling`: its `retry-after`, up to
 * `RATE_LIMIT_RETRIES` times); `log` says each wait.
 */
export function client(token: string, log: (line: string) => void): GitHubApi {
  const onLimit =
    (kind: string) =>
    (after: number, options: { method?: string; url?: string }, _octokit: unknown, retries: number): boolean => {
      const again = retries < RATE_LIMIT_RETRIES && after <= MAX_RATE_LIMIT_WAIT_S
      log(`GitHub's ${kind} rate limit on ${options.method} ${options.url}: ${again ? `retrying after ${after} s` : 'not retrying'}`)
      return again
    }
  const options = {
    throttle: { onRateLimit: onLimit('primary'), onSecondaryRateLimit: onLimit('secondary') },
    // A 429 is a rate limit: waited for as its `retry-after` says (throttling), not retried
    // blindly after 1, 4, 9 s (retry's default retries it).
    retry: { doNotRetry: [400, 401, 403, 404, 410, 422, 429, 451] }
  }
  return github.getOctokit(token, options as Parameters<typeof github.getOctokit>[1], retry, throttling)
}

/** The HTTP status of an Octokit request error, if it is one. */
export function httpStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status
  return typeof status === 'number' ? status : undefined
}
