/**
 * The verdict of one run, read from the engine's files (the result JSON, and the comparison
 * verdict JSON that `loadgate report --format json` writes), and the policy that turns it into
 * a failed or passed step. The engine decides; this module only reads what it decided.
 */
import type { FailOn } from './inputs.js'

export interface FailedSlo {
  scope: string
  metric: string
  threshold: string
  measured: number | null
  limit: number
  unit: string
}

/** The headline numbers of the whole run. */
export interface Headline {
  rps: number
  p95Us: number
  p99Us: number
  /** 0.01 = 1% */
  errorRate: number
}

export interface RunResult {
  name: string
  sloPassed: boolean
  failedSlos: FailedSlo[]
  headline: Headline
}

/** Reads the parts of a `result_version: 1` result file that the action reports. */
export function readResult(json: string, file: string): RunResult {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let r: any
  try {
    r = JSON.parse(json)
  } catch (e) {
    throw new Error(`${file} is not JSON: ${(e as Error).message}`, { cause: e })
  }
  if (r?.result_version !== 1 || typeof r.total !== 'object') {
    throw new Error(`${file} is not a loadgate result (result_version 1)`)
  }
  const slo: FailedSlo[] = Array.isArray(r.slo) ? r.slo : []
  return {
    name: String(r.spec?.name ?? ''),
    sloPassed: r.passed === true,
    failedSlos: slo.filter((s) => (s as unknown as { passed: boolean }).passed === false).map((s) => ({
      scope: s.scope,
      metric: s.metric,
      threshold: s.threshold,
      measured: s.measured ?? null,
      limit: s.limit,
      unit: s.unit
    })),
    headline: {
      rps: Number(r.total.rps ?? 0),
      p95Us: Number(r.total.latency_us?.p95 ?? 0),
      p99Us: Number(r.total.latency_us?.p99 ?? 0),
      errorRate: Number(r.total.error_rate ?? 0)
    }
  }
}

/** Against the baseline: `no-baseline` when there was none to compare with. */
export type RegressionState = 'regressed' | 'inconclusive' | 'improved' | 'unchanged' | 'no-baseline'

/**
 * The overall regression state from the engine's JSON verdict (its `rules[].verdict`, at the top
 * or under `comparison`): `regressed` if any rule regressed, else `inconclusive` if any rule
 * could not decide, else `improved` if any rule improved, else `unchanged`.
 */
export function readRegression(json: string, file: string): RegressionState {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let v: any
  try {
    v = JSON.parse(json)
  } catch (e) {
    throw new Error(`${file} is not JSON: ${(e as Error).message}`, { cause: e })
  }
  const rules: unknown = v?.rules ?? v?.comparison?.rules
  if (!Array.isArray(rules)) throw new Error(`${file} has no \`rules\` list: not a loadgate comparison verdict`)
  const states = rules.map((r) => String((r as { verdict?: unknown }).verdict ?? ''))
  for (const s of ['regressed', 'inconclusive', 'improved'] as const) if (states.includes(s)) return s
  return 'unchanged'
}

export interface Verdict {
  slo: 'pass' | 'fail'
  regression: RegressionState
  /** `fail` when an SLO failed or a regression was found, whatever the policy. */
  overall: 'pass' | 'fail'
}

export function verdict(run: RunResult, regression: RegressionState): Verdict {
  const slo = run.sloPassed ? 'pass' : 'fail'
  return { slo, regression, overall: slo === 'fail' || regression === 'regressed' ? 'fail' : 'pass' }
}

/** Why the step fails under `failOn`; empty when it passes. Inconclusive never fails it. */
export function failures(failOn: FailOn, v: Verdict, run: RunResult): string[] {
  const out: string[] = []
  if ((failOn === 'slo' || failOn === 'both') && v.slo === 'fail') {
    const n = run.failedSlos.length
    out.push(`${n} SLO threshold${n === 1 ? '' : 's'} failed`)
  }
  if ((failOn === 'regression' || failOn === 'both') && v.regression === 'regressed') {
    out.push('a regression against the baseline was found')
  }
  return out
}

/** `1234us` -> `1.23ms`; for annotations. */
export function formatMeasured(value: number | null, unit: string): string {
  if (value === null) return 'not measured (no responses)'
  switch (unit) {
    case 'us':
      return value >= 1000 ? `${(value / 1000).toFixed(2)}ms` : `${value}us`
    case 'ratio':
      return `${(value * 100).toFixed(3)}%`
    case '1/s':
      return `${value.toFixed(1)}/s`
    default:
      return String(value)
  }
}
