/**
 * The engine's verdict document (`loadgate report --format json`; schema/verdict.schema.json,
 * typed by src/generated/verdict.ts), and the `fail-on` policy that picks which of the engine's
 * decisions fail the step. The engine decides and formats; this module only reads.
 */
import type { FailOn } from './inputs.js'
import type { LoadgateVerdict, SloDelta } from './generated/verdict.js'

export type { LoadgateVerdict, SloDelta } from './generated/verdict.js'

/** The version of the verdict document this action reads. */
export const VERDICT_VERSION = 1

/** Reads the verdict document the engine wrote to `file`. */
export function readVerdict(json: string, file: string): LoadgateVerdict {
  let v: unknown
  try {
    v = JSON.parse(json)
  } catch (e) {
    throw new Error(`${file} is not JSON: ${(e as Error).message}`, { cause: e })
  }
  const version = (v as { verdict_version?: unknown } | null)?.verdict_version
  if (version !== VERDICT_VERSION) {
    throw new Error(`${file} is not a loadgate verdict of verdict_version ${VERDICT_VERSION} (verdict_version: ${JSON.stringify(version)})`)
  }
  const doc = v as LoadgateVerdict
  // Fields added within version 1: an older engine (an old `engine-version`) lacks them.
  if (doc.current?.headline?.display === undefined) {
    throw new Error(
      `${file} has no formatted headline (current.headline.display): the engine (loadgate ${doc.current?.loadgate_version ?? 'of unknown version'}) ` +
        "is older than this action; leave `engine-version` empty to use the action's own version"
    )
  }
  return doc
}

/** The `regression` output: the engine's rule verdicts in one word, `no-baseline` without a baseline. */
export type RegressionState = 'regressed' | 'inconclusive' | 'improved' | 'unchanged' | 'no-baseline'

/**
 * `no-baseline` when the engine compared with none; else `regressed` when the engine found a
 * regression, else the first of `inconclusive`, `improved` that a rule ended in, else `unchanged`.
 */
export function regressionState(v: LoadgateVerdict): RegressionState {
  if (!v.baseline) return 'no-baseline'
  if (v.regressed) return 'regressed'
  for (const s of ['inconclusive', 'improved'] as const) if (v.rules.some((r) => r.verdict === s)) return s
  return 'unchanged'
}

/** The SLO thresholds the engine failed that fail the run (not those of `severity: warn`). */
export function failedSlos(v: LoadgateVerdict): SloDelta[] {
  return v.slo.filter((s) => !s.passed && s.severity !== 'warn')
}

/** The `severity: warn` SLO thresholds that failed: warnings, which never fail the run. */
export function warnedSlos(v: LoadgateVerdict): SloDelta[] {
  return v.slo.filter((s) => !s.passed && s.severity === 'warn')
}

/**
 * Why the step fails under `failOn`, from the engine's decisions: an `interrupted` verdict
 * (always), an `invalid_measurement`
 * verdict (for `invalid-measurement`; then only that: neither SLOs nor rules mean anything),
 * else `slo_passed` (for `slo`) and `regressed` (for `regression`). Empty when the step passes;
 * an inconclusive comparison or a missing baseline never fails it.
 */
export function failures(failOn: FailOn, v: LoadgateVerdict): string[] {
  // An interrupted run is judged on nothing: it fails whatever fail-on says (as exit 3 does).
  if (v.verdict === 'interrupted') return [`the run was interrupted before its end (exit code ${v.exit_code}): it is not judged`]
  if (v.verdict === 'invalid_measurement') {
    if (!failOn.includes('invalid-measurement')) return []
    return [
      `the engine's verdict is invalid_measurement (exit code ${v.exit_code}): the current run or its baseline did not apply the planned load, so nothing can be concluded`
    ]
  }
  const out: string[] = []
  if (failOn.includes('slo') && !v.slo_passed) {
    const n = failedSlos(v).length
    out.push(`${n} SLO threshold${n === 1 ? '' : 's'} failed`)
  }
  if (failOn.includes('regression') && v.regressed) {
    out.push('a regression against the baseline was found')
  }
  return out
}
