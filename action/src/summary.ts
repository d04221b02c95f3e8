/**
 * What the step leaves in the workflow: the job summary, the outputs, and an annotation per
 * failed SLO. Every value comes from the engine's verdict document, as the engine wrote it (its
 * decisions, its formatted numbers); this module only places them.
 */
import * as core from '@actions/core'
import type { LoadgateVerdict } from './verdict.js'
import { failedSlos, regressionState } from './verdict.js'

/** Appends the Markdown report (with the action's note above it) to the job summary. */
export async function writeSummary(markdown: string): Promise<void> {
  await core.summary.addRaw(markdown, true).write()
}

export interface Outputs {
  verdict: LoadgateVerdict
  resultPath: string
  markdownPath: string
  htmlPath: string
  commentUrl: string | undefined
}

/** Sets every output listed in action.yml. Numbers are the headline's raw values (µs, fractions). */
export function setOutputs(o: Outputs): void {
  const v = o.verdict
  const h = v.current.headline
  core.setOutput('verdict', v.verdict === 'pass' ? 'pass' : 'fail')
  core.setOutput('slo', v.slo_passed ? 'pass' : 'fail')
  core.setOutput('regression', regressionState(v))
  core.setOutput('result', o.resultPath)
  core.setOutput('report-markdown', o.markdownPath)
  core.setOutput('report-html', o.htmlPath)
  core.setOutput('rps', String(h.rps))
  core.setOutput('p95-us', h.p95_us == null ? '' : String(h.p95_us))
  core.setOutput('p99-us', h.p99_us == null ? '' : String(h.p99_us))
  core.setOutput('error-rate', String(h.error_rate))
  core.setOutput('comment-url', o.commentUrl ?? '')
}

/** One error annotation per failed SLO threshold, on the spec file, with the engine's numbers. */
export function annotateFailedSlos(v: LoadgateVerdict, specFile: string): void {
  for (const s of failedSlos(v)) {
    core.error(`${s.scope}: ${s.threshold} failed, measured ${s.measured_text} (limit ${s.limit_text})`, {
      title: `loadgate SLO failed: ${s.metric} ${s.threshold}`,
      file: specFile
    })
  }
}

/** The run's headline for the log, as the engine formatted it. */
export function headlineLine(v: LoadgateVerdict): string {
  const d = v.current.headline.display
  return `${v.spec}: rps ${d.rps}, p50 ${d.p50}, p95 ${d.p95}, p99 ${d.p99}, error rate ${d.error_rate}, requests ${d.requests}`
}
