// Generated from schema/verdict.schema.json by `npm run gen-types` (json-schema-to-typescript).
// Do not edit: regenerate the schema with `loadgate schema verdict`, then run `npm run gen-types`.

/**
 * The verdict on one regression rule.
 */
export type RuleState = 'regressed' | 'unchanged' | 'improved' | 'inconclusive'

/**
 * The verdict document: `loadgate compare --format json`, `loadgate report --format json`.
 */
export interface LoadgateVerdict {
  /**
   * Absent without a baseline.
   */
  baseline?: RunInfo | null
  current: RunInfo
  /**
   * The exit code `loadgate compare` / `run --baseline` ends with: 0, 1, 4 or 5.
   */
  exit_code: number
  /**
   * Things to know: a changed spec, interrupted runs, where the rules came from.
   */
  notes: string[]
  /**
   * Whether a rule regressed (false without a baseline).
   */
  regressed: boolean
  rule_counts: RuleCounts
  /**
   * Every regression rule, judged; empty without a baseline.
   */
  rules: RuleVerdict[]
  /**
   * Every SLO of the current run, with the baseline's value of the same threshold.
   */
  slo: SloDelta[]
  /**
   * Whether every SLO passed.
   */
  slo_passed: boolean
  /**
   * The spec's name.
   */
  spec: string
  /**
   * The spec file changed between the baseline and the current run.
   */
  spec_changed: boolean
  /**
   * The verdict in one line, for a human.
   */
  summary: string
  /**
   * Per-target deltas, `total` first; empty without a baseline.
   */
  targets: TargetDelta[]
  /**
   * Key metrics over earlier runs and this one (`loadgate report` with several results);
   * absent otherwise.
   */
  trend?: Trend | null
  /**
   * `pass`, `slo_failed` (wins over `regressed`), `regressed`, or `invalid_measurement`
   * (wins over both).
   */
  verdict: 'pass' | 'slo_failed' | 'regressed' | 'invalid_measurement'
  /**
   * Version of this format: 1.
   */
  verdict_version: number
}
/**
 * Identifies one result.
 */
export interface RunInfo {
  duration_s: number
  headline: Headline
  interrupted: boolean
  loadgate_version: string
  /**
   * Hex SHA-256 of the spec file.
   */
  spec_hash: string
  /**
   * RFC 3339, UTC.
   */
  started_at: string
}
/**
 * The key numbers of a run (all targets together).
 */
export interface Headline {
  display: HeadlineDisplay
  /**
   * Failed requests / requests ended, a fraction.
   */
  error_rate: number
  /**
   * Latency percentiles, µs; absent when there were no responses.
   */
  p50_us?: number | null
  p95_us?: number | null
  p99_us?: number | null
  requests: number
  /**
   * Complete responses per second.
   */
  rps: number
}
/**
 * The same numbers, formatted as the reports show them.
 */
export interface HeadlineDisplay {
  /**
   * Failed requests / requests ended, a percentage.
   */
  error_rate: string
  /**
   * Latency percentile 50 (a duration).
   */
  p50: string
  /**
   * Latency percentile 95 (a duration).
   */
  p95: string
  /**
   * Latency percentile 99 (a duration).
   */
  p99: string
  /**
   * Requests ended.
   */
  requests: string
  /**
   * Complete responses per second.
   */
  rps: string
}
/**
 * How many rules ended in each state.
 */
export interface RuleCounts {
  improved: number
  inconclusive: number
  regressed: number
  unchanged: number
}
/**
 * One regression rule, judged.
 */
export interface RuleVerdict {
  /**
   * `p(95)`, `med`, `mean` or `rate`.
   */
  aggregation: string
  /**
   * `max(max_change × baseline, floor)`: how far the value may move in the worse direction
   * (up; down for `requests`).
   */
  allowed_change?: number | null
  /**
   * Whole-run value of the baseline; absent when it has no responses to measure.
   */
  baseline?: number | null
  /**
   * `current - baseline`.
   */
  change?: number | null
  /**
   * 95% confidence interval of `change` `[low, high]` (moving-block bootstrap over the
   * per-second samples); absent with too few samples.
   *
   * @minItems 2
   * @maxItems 2
   */
  change_ci?: [number, number] | null
  /**
   * Whole-run value of the current run; absent when it has no responses to measure.
   */
  current?: number | null
  /**
   * Absolute change never counted as a regression, from the rule.
   */
  floor: number
  /**
   * Allowed relative change in the worse direction (a fraction), from the rule.
   */
  max_change: number
  /**
   * `latency`, `errors` or `requests`.
   */
  metric: string
  /**
   * The verdict in words, with the numbers that decided it.
   */
  reason: string
  /**
   * `current / baseline - 1`, a fraction; absent when the baseline is 0.
   */
  relative_change?: number | null
  /**
   * The interval relative to the baseline, fractions; absent when the baseline is 0.
   *
   * @minItems 2
   * @maxItems 2
   */
  relative_change_ci?: [number, number] | null
  /**
   * The rule as written (or the default rule's text).
   */
  rule: string
  /**
   * Per-second samples used from the baseline and the current run.
   *
   * @minItems 2
   * @maxItems 2
   */
  samples: [number, number]
  /**
   * `total`: rules apply to the whole run.
   */
  scope: string
  /**
   * Unit of `baseline`, `current`, `change`, `allowed_change`, `floor` and `change_ci`:
   * `us`, `ratio` (0.01 = 1%) or `1/s`.
   */
  unit: string
  verdict: RuleState
}
/**
 * An SLO verdict of the current run beside the same threshold's value in the baseline.
 */
export interface SloDelta {
  /**
   * The same threshold's measured value in the baseline, when it had it.
   */
  baseline?: number | null
  /**
   * `measured - baseline`.
   */
  change?: number | null
  limit: number
  /**
   * `limit`, formatted in its unit as the reports show it.
   */
  limit_text: string
  measured?: number | null
  /**
   * `measured`, formatted in its unit as the reports show it.
   */
  measured_text: string
  metric: string
  passed: boolean
  scope: string
  threshold: string
  unit: string
}
/**
 * A target (or `total`) in both runs.
 */
export interface TargetDelta {
  /**
   * The target exists in the baseline.
   */
  in_baseline: boolean
  /**
   * The target exists in the current run.
   */
  in_current: boolean
  metrics: MetricDelta[]
  name: string
}
/**
 * One metric of one target, in both runs.
 */
export interface MetricDelta {
  baseline?: number | null
  /**
   * `current - baseline`.
   */
  change?: number | null
  current?: number | null
  /**
   * `p50`, `p90`, `p95`, `p99`, `p99_9`, `mean` (latency, `us`), `error_rate` (`ratio`),
   * `rps` (`1/s`).
   */
  metric: string
  /**
   * `current / baseline - 1`; absent when the baseline is 0 or absent.
   */
  relative_change?: number | null
  unit: string
}
/**
 * The trend of a window of runs.
 */
export interface Trend {
  metrics: TrendMetric[]
  runs: TrendRun[]
}
/**
 * One metric over the window.
 */
export interface TrendMetric {
  /**
   * `rps`, `p50_us`, `p95_us`, `p99_us`, `error_rate`.
   */
  key: string
  /**
   * `throughput`, `p50`, `p95`, `p99`, `error rate`.
   */
  label: string
  /**
   * In `unit`, oldest first; absent when a run had no responses.
   */
  raw: (number | null)[]
  /**
   * `1/s`, `us` or `ratio`.
   */
  unit: string
  /**
   * Formatted, oldest first.
   */
  values: string[]
  /**
   * The latest relative to the median of the earlier runs of the window.
   */
  vs_median: string
  /**
   * The latest relative to the run before it, e.g. `+3.1%`.
   */
  vs_previous: string
}
/**
 * One run of the window.
 */
export interface TrendRun {
  /**
   * Short label: the start date and time, `2024-05-01 03:00`.
   */
  label: string
  /**
   * RFC 3339.
   */
  started_at: string
}
