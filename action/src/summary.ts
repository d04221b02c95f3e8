/**
 * What the step leaves in the workflow: the job summary, the outputs, and an annotation per
 * failed SLO. Every value comes from the engine's verdict document, as the engine wrote it (its
 * decisions, its formatted numbers); this module only places them.
 */
import * as core from '@actions/core'
import type { LoadgateVerdict } from './verdict.js'
import { failOnText, type FailOn } from './inputs.js'
import { failedSlos, regressionState, warnedSlos } from './verdict.js'
import { engineFailure, type Invocation } from './engine.js'
import { MARKDOWN_ESCAPE } from './generated/markdown-escape.js'

/** Appends the Markdown report (with the action's note above it) to the job summary. */
export async function writeSummary(markdown: string): Promise<void> {
  await core.summary.addRaw(markdown, true).write()
}

/** The files the outputs name, absolute; '' for one that was not written. */
export interface ReportPaths {
  /** The result JSON (`mode: paired`: the ab document). */
  result: string
  markdown: string
  html: string
  /** The engine's JUnit XML report (`loadgate report --format junit`). */
  junit: string
}

export interface Outputs {
  /** The engine's verdict; undefined when the run could not be carried out. */
  verdict: LoadgateVerdict | undefined
  paths: ReportPaths
  commentUrl: string | undefined
  /** A shard's run: its numbers only; its decisions are the merge step's (empty here). */
  shard?: boolean
  /** The engine binary the action ran, for later steps (`loadgate history show`). */
  engine?: string
  /** The data branch's checkout (`history-branch`), with this run's result when it added one. */
  historyDir?: string
}

/**
 * Sets every output listed in action.yml. Numbers are the headline's raw values (µs,
 * fractions). Without a verdict (nothing measured) `verdict` is `fail` and the engine's
 * decisions and numbers are empty; for a shard, the decisions (`verdict`, `slo`,
 * `regression`) are empty.
 */
export function setOutputs(o: Outputs): void {
  const v = o.verdict
  const h = v?.current.headline
  const judged = o.shard ? undefined : v
  const number = (x: number | null | undefined) => (x == null ? '' : String(x))
  core.setOutput('verdict', o.shard ? '' : v?.verdict === 'pass' ? 'pass' : 'fail')
  core.setOutput('slo', judged === undefined ? '' : judged.slo_passed ? 'pass' : 'fail')
  core.setOutput('regression', judged === undefined ? '' : regressionState(judged))
  core.setOutput('result', o.paths.result)
  core.setOutput('report-markdown', o.paths.markdown)
  core.setOutput('report-html', o.paths.html)
  core.setOutput('report-junit', o.paths.junit)
  core.setOutput('rps', number(h?.rps))
  core.setOutput('p95-us', number(h?.p95_us))
  core.setOutput('p99-us', number(h?.p99_us))
  core.setOutput('error-rate', number(h?.error_rate))
  core.setOutput('comment-url', o.commentUrl ?? '')
  core.setOutput('engine', o.engine ?? '')
  core.setOutput('history-dir', o.historyDir ?? '')
}

/**
 * The note above the engine's report of an invalid measurement: why the engine found it
 * invalid (the result's `health.problems`; none listed when the baseline's was the invalid
 * one), what to do, and what `fail-on` and the branch make of it. One line.
 */
export function invalidMeasurementNote(problems: string[], failOn: FailOn, onBranch: boolean): string {
  const why =
    problems.length > 0
      ? `this run did not apply the planned load (${problems.join('; ')})`
      : 'this run or its baseline did not apply the planned load'
  const step = failOn.includes('invalid-measurement')
    ? 'This step fails (`fail-on` names `invalid-measurement`).'
    : `This step does not fail for it (fail-on: ${failOnText(failOn)}).`
  const branch = onBranch ? " This result is left out of the branch's history window." : ''
  return (
    `**Invalid measurement**: ${why}, so its numbers are not compared or trusted. ` +
    'What to do: follow the engine\'s hint (e.g. raise `max_in_flight`, lower the rate, or give the load generator a larger runner), then re-run the job. ' +
    step +
    branch
  )
}

/**
 * Why nothing was measured (the engine could not carry out the run) or merged: the step still
 * publishes this report, then fails whatever `fail-on` says.
 */
export interface Unmeasured {
  /** The Markdown report: what happened and what to do. */
  markdown: string
  /** The line above it in the summary and the comment. */
  note: string
  /** The engine's whole standard error, uploaded as `engine.log`; undefined when it did not run. */
  log: string | undefined
  /** The step's failure message. */
  message: string
}

/** A run (`loadgate run` or `ab`) that the engine could not carry out (exit code 3), of `spec`. */
export function notCarriedOut(spec: string, command: string, r: Invocation): Unmeasured {
  return {
    markdown: notCarriedOutMarkdown(spec, command, r.code, r.stderr),
    note: `Not measured: \`loadgate ${command}\` could not carry out the run (exit code ${r.code}), so nothing was measured or compared, and this step fails whatever \`fail-on\` says.`,
    log: r.stderr,
    message: engineFailure(command, r)
  }
}

/**
 * The action's Markdown report for a run the engine could not carry out (exit code 3): the
 * spec, the engine's error lines (`loadgate: error: ...`, never the service's own output, which
 * shares the engine's standard error), and what to do.
 */
export function notCarriedOutMarkdown(spec: string, command: string, code: number, stderr: string): string {
  return [
    `### ⚠️ loadgate ${escapeMarkdown(spec)}: the run could not be carried out`,
    '',
    `\`loadgate ${command}\` stopped with exit code ${code} before measuring anything: there is no result, no SLO check and no comparison. The engine said:`,
    '',
    errorLines(stderr),
    '',
    "What to do: fix what the message names, then re-run the job. Most often the service did not start or did not become ready (check the spec's `service.command`, `ready_url` and `ready_timeout`, and that the build step before this one ran), or nothing listens at `base_url`. The engine's whole output is in this step's log and in `engine.log` in the artifact.",
    ''
  ].join('\n')
}

/**
 * The engine's error lines (`loadgate: error: ...`, never the service's own output, which
 * shares the engine's standard error) as a Markdown code block.
 */
export function errorLines(stderr: string): string {
  const said = stderr.split('\n').filter((l) => l.startsWith('loadgate: error:'))
  const text = said.length > 0 ? said.join('\n') : '(no error line: see the step log, or engine.log in the artifact)'
  // A fence longer than any run of backticks in the text, so nothing in it can close the block.
  const fence = '`'.repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((m) => m[0].length + 1)))
  return `${fence}text\n${text}\n${fence}`
}

/**
 * Text shown as is in GitHub-flavoured Markdown, in running text or a table cell, by the rules
 * the engine uses too (templates/markdown-escape.json, generated into
 * src/generated/markdown-escape.ts; engine/src/report/markdown_escape.rs says why each
 * character): hidden characters written out (`\\u{202e}`), Markdown's characters
 * backslash-escaped, HTML's as entities, `@` and `#` followed by a zero-width space (no
 * mention, no issue link), line breaks and other control characters as spaces.
 */
export function escapeMarkdown(text: string): string {
  const r = MARKDOWN_ESCAPE
  let out = ''
  for (const c of text) {
    const code = c.codePointAt(0) ?? 0
    if (r.hidden.some(([low, high]) => low <= code && code <= high)) {
      out += `\\\\u{${code.toString(16)}}`
    } else if (r.backslash.includes(c)) {
      out += `\\${c}`
    } else if (Object.hasOwn(r.entities, c)) {
      out += r.entities[c as keyof typeof r.entities]
    } else if (r.break_after.includes(c)) {
      out += c + r.break
    } else if (/\p{Cc}/u.test(c)) {
      out += r.control
    } else {
      out += c
    }
  }
  return out
}

/**
 * `text` as a Markdown code span, shown as it is: inside one, Markdown and HTML are not read
 * and a backslash would show, so nothing is escaped but what a code span cannot hold: its
 * fence is longer than any run of backticks in the text, line breaks and other control
 * characters are spaces, hidden characters are written out (`\u{202e}`). Not for table cells
 * (a `|` would still end the cell).
 */
export function codeSpan(text: string): string {
  const r = MARKDOWN_ESCAPE
  let shown = ''
  for (const c of text) {
    const code = c.codePointAt(0) ?? 0
    if (r.hidden.some(([low, high]) => low <= code && code <= high)) shown += `\\u{${code.toString(16)}}`
    else shown += /\p{Cc}/u.test(c) ? r.control : c
  }
  const fence = '`'.repeat(Math.max(0, ...[...shown.matchAll(/`+/g)].map((m) => m[0].length)) + 1)
  const pad = shown.startsWith('`') || shown.endsWith('`') ? ' ' : ''
  return `${fence}${pad}${shown}${pad}${fence}`
}

/**
 * One error annotation per failed SLO threshold, on the spec file at the threshold's line
 * (the engine's `line`; the file alone when it has none), with the engine's numbers.
 */
export function annotateFailedSlos(v: LoadgateVerdict, specFile: string): void {
  for (const s of failedSlos(v)) {
    core.error(`${s.scope}: ${s.threshold} failed, measured ${s.measured_text} (limit ${s.limit_text})`, {
      title: `loadgate SLO failed: ${s.metric} ${s.threshold}`,
      file: specFile,
      ...(s.line == null ? {} : { startLine: s.line })
    })
  }
  // `severity: warn` thresholds: a warning annotation, never an error.
  for (const s of warnedSlos(v)) {
    core.warning(`${s.scope}: ${s.threshold} failed (warn only), measured ${s.measured_text} (limit ${s.limit_text})`, {
      title: `loadgate SLO warning: ${s.metric} ${s.threshold}`,
      file: specFile,
      ...(s.line == null ? {} : { startLine: s.line })
    })
  }
}

/**
 * One error annotation per regressed rule, with the engine's reason, on the spec file at the
 * rule's line when the spec writes it (a default rule has none).
 */
export function annotateRegressions(v: LoadgateVerdict, specFile: string): void {
  for (const r of v.rules.filter((x) => x.verdict === 'regressed')) {
    // A `severity: warn` rule's regression is a warning: it never fails the run.
    const warn = r.severity === 'warn'
    ;(warn ? core.warning : core.error)(`${r.scope}: ${r.metric} ${r.rule} regressed${warn ? ' (warn only)' : ''}: ${r.reason}`, {
      title: `loadgate regression${warn ? ' warning' : ''}: ${r.metric} ${r.rule}`,
      file: specFile,
      ...(r.line == null ? {} : { startLine: r.line })
    })
  }
}

/** The run's headline for the log, as the engine formatted it. */
export function headlineLine(v: LoadgateVerdict): string {
  const d = v.current.headline.display
  return `${v.spec}: rps ${d.rps}, p50 ${d.p50}, p95 ${d.p95}, p99 ${d.p99}, error rate ${d.error_rate}, requests ${d.requests}`
}
