/**
 * What leads on from the comment and the job summary: links to the workflow run, its artifact
 * and its HTML report, and a short trend (sparklines of p95 and throughput) of a branch's last
 * results, from the engine's trend of the history window an artifact carries.
 */
import type { Trend } from './generated/verdict.js'
import { codeSpan } from './summary.js'

/** Where this run's pages are. */
export interface Links {
  /** The workflow run's page. */
  runUrl: string
  artifactName: string
  /** The artifact's id, once uploaded; before that the link leads to the run's artifacts. */
  artifactId?: number
  /** Whether there is an HTML report (none when nothing was measured). */
  html: boolean
  /** The HTML report's own artifact id (`<artifact-name>.html`, not zipped), once uploaded. */
  htmlId?: number
}

/** One line of Markdown links: the run, the artifact, the HTML report. */
export function linksLine(l: Links): string {
  const artifacts = `${l.runUrl}#artifacts`
  const artifact = l.artifactId === undefined ? artifacts : `${l.runUrl}/artifacts/${l.artifactId}`
  const parts = [`[Workflow run](${l.runUrl})`, `[Artifact ${codeSpan(l.artifactName)}](${artifact})`]
  if (l.html) parts.push(`[HTML report](${l.htmlId === undefined ? artifacts : `${l.runUrl}/artifacts/${l.htmlId}`})`)
  return parts.join(' · ')
}

/** The eight block characters of a sparkline, lowest first. */
const BARS = '▁▂▃▄▅▆▇█'

/**
 * `values` as a sparkline: each value's height between the lowest and the highest (all `▄`
 * when they are equal); a missing value (a run without responses) is a space.
 */
export function sparkline(values: Array<number | null>): string {
  const known = values.filter((v): v is number => v !== null && Number.isFinite(v))
  const low = Math.min(...known)
  const high = Math.max(...known)
  return values
    .map((v) => {
      if (v === null || !Number.isFinite(v)) return ' '
      if (high === low) return BARS[3]
      return BARS[Math.round(((v - low) / (high - low)) * (BARS.length - 1))]
    })
    .join('')
}

/**
 * The trend of `branch`'s last runs in one line: p95 and throughput as sparklines, oldest
 * first, with the first and the latest value as the engine formatted them; '' when the trend
 * has fewer than two runs or neither metric.
 */
export function trendLine(t: Trend, branch: string): string {
  if (t.runs.length < 2) return ''
  const parts: string[] = []
  for (const [key, label] of [
    ['p95_us', 'p95'],
    ['rps', 'throughput']
  ] as const) {
    const m = t.metrics.find((x) => x.key === key)
    if (!m || m.raw.every((v) => v === null)) continue
    parts.push(`${label} \`${sparkline(m.raw)}\` (${m.values[0]} → ${m.values[m.values.length - 1]})`)
  }
  if (parts.length === 0) return ''
  return `**Trend of ${codeSpan(branch)}**, last ${t.runs.length} runs: ${parts.join(' · ')}`
}
