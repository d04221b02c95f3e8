/** The links and the trend line above the report (links.ts). */
import { describe, expect, it } from 'vitest'
import { linksLine, sparkline, trendLine } from '../../src/links.js'
import type { Trend } from '../../src/generated/verdict.js'

describe('linksLine', () => {
  const runUrl = 'https://github.com/octo/shop/actions/runs/7'
  it("links to the run's artifacts until the uploads give ids, then to each", () => {
    expect(linksLine({ runUrl, artifactName: 'loadgate', html: true })).toBe(
      `[Workflow run](${runUrl}) · [Artifact \`loadgate\`](${runUrl}#artifacts) · [HTML report](${runUrl}#artifacts)`
    )
    expect(linksLine({ runUrl, artifactName: 'perf_api', html: true, artifactId: 11, htmlId: 12 })).toBe(
      `[Workflow run](${runUrl}) · [Artifact \`perf_api\`](${runUrl}/artifacts/11) · [HTML report](${runUrl}/artifacts/12)`
    )
    expect(linksLine({ runUrl, artifactName: 'loadgate', html: false })).not.toContain('HTML')
  })
})

describe('sparkline', () => {
  it('scales each value between the lowest and the highest; a missing one is a space', () => {
    expect(sparkline([1, 2, 3, 4, 5, 6, 7, 8])).toBe('▁▂▃▄▅▆▇█')
    expect(sparkline([10, null, 10])).toBe('▄ ▄')
    expect(sparkline([0, 100])).toBe('▁█')
  })
})

describe('trendLine', () => {
  const trend = (n: number): Trend => ({
    runs: Array.from({ length: n }, (_, i) => ({ label: `run ${i}`, started_at: `2026-01-0${i + 1}T00:00:00Z` })),
    metrics: [
      { key: 'rps', label: 'throughput', unit: '1/s', raw: [100, 110, 90].slice(0, n), values: ['100.0/s', '110.0/s', '90.0/s'].slice(0, n), vs_median: '', vs_previous: '' },
      { key: 'p95_us', label: 'p95', unit: 'us', raw: [1000, 2000, 1500].slice(0, n), values: ['1.00 ms', '2.00 ms', '1.50 ms'].slice(0, n), vs_median: '', vs_previous: '' }
    ]
  } as unknown as Trend)

  it("sparklines of p95 and throughput, with the engine's first and latest values", () => {
    expect(trendLine(trend(3), 'main')).toBe('**Trend of `main`**, last 3 runs: p95 `▁█▅` (1.00 ms → 1.50 ms) · throughput `▅█▁` (100.0/s → 90.0/s)')
  })

  it('says nothing about a single run', () => {
    expect(trendLine(trend(1), 'main')).toBe('')
  })
})
