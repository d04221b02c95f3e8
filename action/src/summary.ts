/**
 * What the step leaves in the workflow: the job summary, the outputs, and an annotation per
 * failed SLO. The report itself is the engine's Markdown; this module only places it.
 */
import * as core from '@actions/core'
import type { FailedSlo, Headline, Verdict } from './verdict.js'
import { formatMeasured } from './verdict.js'

/** Appends the Markdown report (with the action's notes above it) to the job summary. */
export async function writeSummary(markdown: string): Promise<void> {
  await core.summary.addRaw(markdown, true).write()
}

export interface Outputs {
  verdict: Verdict
  resultPath: string
  markdownPath: string
  htmlPath: string
  headline: Headline
  commentUrl: string | undefined
}

/** Sets every output listed in action.yml. */
export function setOutputs(o: Outputs): void {
  core.setOutput('verdict', o.verdict.overall)
  core.setOutput('slo', o.verdict.slo)
  core.setOutput('regression', o.verdict.regression)
  core.setOutput('result', o.resultPath)
  core.setOutput('report-markdown', o.markdownPath)
  core.setOutput('report-html', o.htmlPath)
  core.setOutput('rps', o.headline.rps.toFixed(1))
  core.setOutput('p95-us', String(o.headline.p95Us))
  core.setOutput('p99-us', String(o.headline.p99Us))
  core.setOutput('error-rate', String(o.headline.errorRate))
  core.setOutput('comment-url', o.commentUrl ?? '')
}

/** One error annotation per failed SLO threshold, on the spec file. */
export function annotateFailedSlos(failed: FailedSlo[], specFile: string): void {
  for (const s of failed) {
    core.error(
      `${s.scope}: ${s.threshold} failed, measured ${formatMeasured(s.measured, s.unit)} (limit ${formatMeasured(s.limit, s.unit)})`,
      { title: `loadgate SLO failed: ${s.metric} ${s.threshold}`, file: specFile }
    )
  }
}
