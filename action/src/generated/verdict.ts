// Generated from schema/verdict.schema.json by `npm run gen-types` (json-schema-to-typescript).
// Do not edit: regenerate the schema with `loadgate schema verdict`, then run `npm run gen-types`.

/**
 * What a failed threshold or regression rule does: `fail` the run (the default) or only
 * `warn` (reported in the comment, the summary and JUnit as a skipped case; never fails).
 */
export type Severity = 'fail' | 'warn'
/**
 * The verdict on one regression rule.
 */
export type RuleState = 'regressed' | 'unchanged' | 'improved' | 'inconclusive'
/**
 * The overall verdict of a result, with its baseline when there is one: the gate's decision
 * on a run that ran to its end, else `interrupted`.
 */
export type Overall = 'pass' | 'slo_failed' | 'regressed' | 'invalid_measurement' | 'interrupted'

/**
 * The verdict document: `loadgate compare --format json`, `loadgate report --format json`.
 */
export interface LoadgateVerdict {
  /**
   * The baseline run, as `current`; absent without a baseline.
   */
  baseline?: RunInfo | null
  /**
   * The current run: when, how long, its spec's hash and its key numbers.
   */
  current: RunInfo
  /**
   * The exit code `loadgate compare` / `run --baseline` ends with: 0, 1, 3 (interrupted),
   * 4 or 5.
   */
  exit_code: number
  /**
   * The rules tested together at one false-alarm rate per run: how many, at what rate, by
   * which method; absent without a baseline, or when no rule was tested.
   */
  family?: Family | null
  /**
   * The current run's flows, in the spec's order; absent (empty) without flows.
   */
  flows?: VerdictFlow[]
  /**
   * Things to know: a changed spec, interrupted runs, where the rules came from.
   */
  notes: string[]
  /**
   * Whether a rule regressed (false without a baseline).
   */
  regressed: boolean
  /**
   * How many rules ended in each state (all 0 without a baseline).
   */
  rule_counts: RuleCounts
  /**
   * Every regression rule, judged; empty without a baseline.
   */
  rules: RuleVerdict[]
  /**
   * The current run's scenarios, in the spec's order; absent (empty) for a spec with one
   * `load`.
   */
  scenarios?: VerdictScenario[]
  /**
   * Every SLO of the current run, with the baseline's value of the same threshold.
   */
  slo: SloDelta[]
  /**
   * Whether every SLO of the current run passed (true when it has none; `warn` SLOs do
   * not count).
   */
  slo_passed: boolean
  /**
   * The spec's `name`, shared by the current run and the baseline.
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
   * `pass`, `slo_failed` (wins over `regressed`), `regressed`, `invalid_measurement` (wins
   * over both), or `interrupted` (wins over all: the current run was stopped before its
   * end, and is not judged).
   */
  verdict: Overall
  /**
   * Version of this format: 1 (bumped on an incompatible change).
   */
  verdict_version: number
  /**
   * How many checks are warnings: `warn` SLOs that failed and `warn` rules that regressed
   * (reported; they never fail the gate); absent when none.
   */
  warnings?: number
}
/**
 * Identifies one result.
 */
export interface RunInfo {
  /**
   * Measured time, seconds (warmup excluded).
   */
  duration_s: number
  /**
   * The key numbers of the run, all targets together: throughput, p50/p95/p99, error
   * rate, requests.
   */
  headline: Headline
  /**
   * The run was interrupted before its end.
   */
  interrupted: boolean
  /**
   * The version of loadgate that ran it.
   */
  loadgate_version: string
  /**
   * SHA-256 of the spec file's bytes, 64 lowercase hex digits.
   */
  spec_hash: string
  /**
   * When the run started: RFC 3339, UTC.
   */
  started_at: string
}
/**
 * The key numbers of a run (all targets together).
 */
export interface Headline {
  /**
   * The same numbers formatted by the engine, as its reports show them.
   */
  display: HeadlineDisplay
  /**
   * Failed requests / requests ended, a fraction.
   */
  error_rate: number
  /**
   * Latency p50, µs; absent when there were no responses.
   */
  p50_us?: number | null
  /**
   * Latency p95, µs; absent when there were no responses.
   */
  p95_us?: number | null
  /**
   * Latency p99, µs; absent when there were no responses.
   */
  p99_us?: number | null
  /**
   * Requests ended (responses and transport errors).
   */
  requests: number
  /**
   * Complete responses per second.
   */
  rps: number
}
/**
 * The headline's numbers formatted by the engine as its reports show them; `–` for a value
 * that does not exist.
 */
export interface HeadlineDisplay {
  /**
   * Error rate as a percentage, e.g. `0.150%`.
   */
  error_rate: string
  /**
   * Latency p50 in a readable unit, e.g. `850us`, `8.40ms`, `1.20s`; `–` without responses.
   */
  p50: string
  /**
   * Latency p95 in a readable unit, as `p50`.
   */
  p95: string
  /**
   * Latency p99 in a readable unit, as `p50`.
   */
  p99: string
  /**
   * Requests ended (responses and transport errors), e.g. `3511`.
   */
  requests: string
  /**
   * Throughput, complete responses per second, e.g. `876.8/s`.
   */
  rps: string
}
/**
 * The rules tested together in one comparison, sharing one false-alarm rate per run.
 */
export interface Family {
  /**
   * The per-run false-alarm rate the rules share (α), a fraction: 0.05.
   */
  alpha: number
  /**
   * `holm` (paired sub-runs, or a stored history: Student t) or `max-t` (two runs, block
   * bootstrap step-down).
   */
  method: string
  /**
   * Rules tested together (m); untested (inconclusive for lack of data) not counted.
   */
  tested: number
  /**
   * In words, e.g. `18 rules tested together at a 5% false-alarm rate per run (Holm)`.
   */
  text: string
}
/**
 * A flow in the JSON verdict: its iterations in numbers, and as the reports show them.
 */
export interface VerdictFlow {
  /**
   * `iterations_per_s`, `failed_rate` and the duration percentiles as the reports show them
   * (`12.5/s`, `1.000%`, `250ms`).
   */
  display: FlowDisplay
  /**
   * Iteration duration percentiles, microseconds; absent when no iteration ended.
   */
  duration_us?: VerdictPercentiles | null
  /**
   * Failed iterations.
   */
  failed: number
  /**
   * Failed iterations by reason: `request`, `check`, `extraction`, `missing_variable`.
   */
  failed_by_reason: {
    [k: string]: number
  }
  /**
   * `failed / iterations`, a fraction (0.01 = 1%); 0 without iterations.
   */
  failed_rate: number
  /**
   * Iterations failed for `request`, by the request's error kind.
   */
  failed_requests_by_kind: {
    [k: string]: number
  }
  /**
   * Iterations that ended, passed or failed.
   */
  iterations: number
  /**
   * Iterations that ended per second of the measured window.
   */
  iterations_per_s: number
  /**
   * The flow's `name`.
   */
  name: string
  /**
   * Its steps, in order: each step's target (`flow/step`, a row of the verdict's `targets`
   * when there is a baseline) and `group`.
   */
  steps: FlowStep[]
}
/**
 * A flow's numbers formatted by the engine.
 */
export interface FlowDisplay {
  /**
   * Failed iterations, e.g. `1.000%` (`–` without iterations).
   */
  failed: string
  /**
   * Iteration duration p50, e.g. `250ms`.
   */
  p50: string
  /**
   * Iteration duration p95.
   */
  p95: string
  /**
   * Iteration duration p99.
   */
  p99: string
  /**
   * Iterations per second, e.g. `12.5/s`.
   */
  rate: string
}
/**
 * Percentiles of a flow's iteration duration, microseconds.
 */
export interface VerdictPercentiles {
  /**
   * Median, microseconds.
   */
  p50_us: number
  /**
   * 95th percentile, microseconds.
   */
  p95_us: number
  /**
   * 99th percentile, microseconds.
   */
  p99_us: number
}
/**
 * One step of a flow, as the reports show it.
 */
export interface FlowStep {
  /**
   * The step's `group`, for reports; absent when the spec gives none.
   */
  group?: string | null
  /**
   * The name of the target that measures the step's requests (`flow/step`).
   */
  target: string
}
/**
 * How many rules ended in each state.
 */
export interface RuleCounts {
  /**
   * Rules whose whole interval is better than the allowed change.
   */
  improved: number
  /**
   * Rules the data could not decide.
   */
  inconclusive: number
  /**
   * Rules that regressed (each fails the gate).
   */
  regressed: number
  /**
   * Rules within their allowed change.
   */
  unchanged: number
}
/**
 * One regression rule, judged: with its one-sided `level`, its minimum detectable effect at
 * 80% power (`mde`, `relative_mde`) and its effective allowance (`relative_allowed_change`),
 * and those formatted as the reports show them (`display`).
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
   * Whole-run value of the baseline (of its target or flow, for a scoped rule); with a stored
   * history (`--baseline-history`), the level it predicts: the median of the comparable
   * results since the last change point. Absent when it has no responses to measure, or not
   * that target or flow (or, with a history, the current run has none).
   */
  baseline?: number | null
  /**
   * `current - baseline`.
   */
  change?: number | null
  /**
   * Interval of `change` `[low, high]`, each bound at the one-sided `level` (two runs: the
   * block bootstrap of their seconds; with `--baseline-history`: the prediction bound of the
   * history's level, Student t; `loadgate ab`: Student t across its sub-runs); absent when
   * the rule was not tested.
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
   * The rule's statistics formatted by the engine as its reports show them.
   */
  display: RuleDisplay
  /**
   * Absolute change never counted as a regression, from the rule.
   */
  floor: number
  /**
   * One-sided level of each bound of `change_ci`, a fraction (e.g. 0.0031: the rule's share
   * of the family's false-alarm rate at the step that decided it); absent when the rule
   * was not tested.
   */
  level?: number | null
  /**
   * The 1-based line of the rule in the spec file, when the report was given it
   * (`--spec FILE`, the very file the run was made from); absent otherwise, and for a
   * default rule, which the spec does not write.
   */
  line?: number | null
  /**
   * Allowed relative change in the worse direction (a fraction), from the rule.
   */
  max_change: number
  /**
   * Minimum detectable effect at 80% power at `level` (Bloom 1995), in the rule's unit: a
   * magnitude in the worse direction, like `allowed_change`; absent when not tested.
   */
  mde?: number | null
  /**
   * `latency`, `errors` or `requests`.
   */
  metric: string
  /**
   * The verdict in words, with the numbers that decided it.
   */
  reason: string
  /**
   * The effective allowance, `allowed_change / |baseline|`, a fraction: the floor turned
   * into a relative allowance (`p(95) +5% floor 50us` allows +24% on a 210 µs baseline);
   * absent when the baseline is absent or 0.
   */
  relative_allowed_change?: number | null
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
   * `mde` relative to the baseline, a fraction; absent when not tested or the baseline is 0.
   */
  relative_mde?: number | null
  /**
   * The rule as written (or the default rule's text).
   */
  rule: string
  /**
   * Samples used from the baseline and the current run: complete seconds of two runs, the
   * sub-runs of `loadgate ab` with a value on both sides (the same on both), or with a
   * stored history the results since the last change point and 1.
   *
   * @minItems 2
   * @maxItems 2
   */
  samples: [number, number]
  /**
   * `total`, or the target's or flow's name.
   */
  scope: string
  /**
   * What the rule compares: `total` (the whole run), `target` or `flow` (its iterations:
   * `latency` is the iteration duration, `errors` the failed iterations, `requests` the
   * iterations per second). Absent for `total`.
   */
  scope_kind?: string
  /**
   * `fail` (a regression fails the run) or `warn` (a regression is reported and never
   * fails it); absent for `fail`.
   */
  severity?: Severity
  /**
   * Only the requests of the scope that carry these tags (`latency{kind:write}`); absent:
   * all of them.
   */
  tags?: {
    [k: string]: string
  }
  /**
   * Unit of `baseline`, `current`, `change`, `allowed_change`, `floor` and `change_ci`:
   * `us`, `ratio` (0.01 = 1%) or `1/s`.
   */
  unit: string
  /**
   * The verdict on the rule.
   */
  verdict: RuleState
}
/**
 * A rule's statistics formatted by the engine as its reports show them; `–` for a value that
 * does not exist.
 */
export interface RuleDisplay {
  /**
   * The effective allowance, e.g. `+10.0% (730us)`, `+24.0% (floor 50us)`, `-10.0%
   * (102.8/s)` for throughput, `+0.100%` for the error rate.
   */
  allowed: string
  /**
   * The one-sided level of `change_ci`'s bounds, e.g. `0.278%`; `–` when not tested.
   */
  level: string
  /**
   * The minimum detectable effect at 80% power, e.g. `+12.3% (900us)`, `+0.210%` for the
   * error rate; `not tested`.
   */
  mde: string
}
/**
 * One scenario of the current run: what it measured apart from the others.
 */
export interface VerdictScenario {
  /**
   * Its executor, k6's name: `constant-vus`, `ramping-vus`, `constant-arrival-rate`,
   * `ramping-arrival-rate`, `per-vu-iterations` or `shared-iterations`.
   */
  executor: string
  /**
   * Its requests' key numbers: throughput, p50/p95/p99, error rate, requests.
   */
  headline: Headline
  /**
   * Iterations that ended: its flows' iterations, or its requests for targets.
   */
  iterations: number
  /**
   * Those per second of its measured window.
   */
  iterations_per_s: number
  /**
   * The scenario's `name`.
   */
  name: string
  /**
   * Why its measurement is invalid, one sentence each; empty when valid.
   */
  problems: string[]
  /**
   * When it started measuring, seconds after the run's start (its `start_time`).
   */
  start_time_s: number
  /**
   * Whether the generator applied its planned load, on its own schedule.
   */
  valid: boolean
}
/**
 * One SLO threshold of the current run, with the baseline's value of it and its line in the
 * spec.
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
  /**
   * The threshold's limit in `unit`.
   */
  limit: number
  /**
   * `limit` formatted by the engine as its reports show it, e.g. `200.00ms`, `1.000%`.
   */
  limit_text: string
  /**
   * The 1-based line of the threshold in the spec file, when the report was given it
   * (`--spec FILE`, the very file the run was made from); absent otherwise.
   */
  line?: number | null
  /**
   * The current run's measured value in `unit`; absent when it could not be measured.
   */
  measured?: number | null
  /**
   * `measured` formatted by the engine as the Markdown report shows it, e.g. `12.34ms`;
   * the reports' missing-value text `–` when absent.
   */
  measured_text: string
  /**
   * `latency`, `errors`, `requests` or `checks`.
   */
  metric: string
  /**
   * Whether the current run met the threshold.
   */
  passed: boolean
  /**
   * `total`, or the target's name.
   */
  scope: string
  /**
   * What its scope is: `total`, `target`, `flow` or `scenario` (then `scope` is the
   * scenario's name); absent for results written before scenarios.
   */
  scope_kind?: string | null
  /**
   * `fail` (a failure fails the run) or `warn` (a failure is a warning: reported, never
   * fails the run); `fail` when absent.
   */
  severity?: Severity
  /**
   * Only the requests of the scope that carry these tags (`latency{kind:write}`); absent:
   * all of them.
   */
  tags?: {
    [k: string]: string
  }
  /**
   * The threshold as written, e.g. `p(95) < 200ms`.
   */
  threshold: string
  /**
   * Unit of `limit`, `measured`, `baseline` and `change`: `us`, `ratio` (0.01 = 1%), `1/s`
   * or `count`.
   */
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
  /**
   * The metrics of [`MetricDelta::metric`], in that order.
   */
  metrics: MetricDelta[]
  /**
   * The target's name, or `total`.
   */
  name: string
}
/**
 * One metric of one target, in both runs.
 */
export interface MetricDelta {
  /**
   * The baseline's value; absent when the target is not in it or had no responses.
   */
  baseline?: number | null
  /**
   * `current - baseline`.
   */
  change?: number | null
  /**
   * The current run's value; absent when the target is not in it or had no responses.
   */
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
  /**
   * Unit of `baseline`, `current` and `change`: `us`, `ratio` (0.01 = 1%) or `1/s`.
   */
  unit: string
}
/**
 * The trend of a window of runs.
 */
export interface Trend {
  /**
   * Throughput, p50, p95, p99 and error rate over the runs.
   */
  metrics: TrendMetric[]
  /**
   * The runs of the window, oldest first, the latest last.
   */
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
   * Unit of `raw`: `1/s` (throughput), `us` (latencies) or `ratio` (error rate, 0.01 = 1%).
   */
  unit: string
  /**
   * The metric in each run, formatted as the reports show it (`12.00ms`), oldest first;
   * `–` when a run had no responses.
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
   * When the run's measuring started, RFC 3339 in UTC (the result's `started_at`).
   */
  started_at: string
}
