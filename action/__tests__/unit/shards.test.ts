import { describe, expect, it } from 'vitest'
import { shardArtifactName, shardOfArtifact, shardText } from '../../src/shards.js'
import { selectShardArtifacts } from '../../src/merge.js'

describe('shard artifact names', () => {
  it('names a shard <artifact-name>-shard-K-of-N and reads the name back', () => {
    expect(shardArtifactName('loadgate', { index: 2, count: 4 })).toBe('loadgate-shard-2-of-4')
    expect(shardArtifactName('perf-api', { index: 10, count: 12 })).toBe('perf-api-shard-10-of-12')
    expect(shardText({ index: 3, count: 8 })).toBe('3/8')
    for (const [name, k, n] of [['loadgate', 1, 1], ['perf-api', 7, 16], ['a-shard-1-of-2', 2, 2]] as const) {
      expect(shardOfArtifact(name, shardArtifactName(name, { index: k, count: n }))).toEqual({ index: k, count: n })
    }
  })

  it.each([
    'loadgate',
    'loadgate-shard-',
    'loadgate-shard-2',
    'loadgate-shard-2-of-',
    'loadgate-shard-0-of-4',
    'loadgate-shard-5-of-4',
    'loadgate-shard-02-of-4',
    'loadgate-shard-2-of-4-old',
    'loadgate-api-shard-2-of-4',
    'other-shard-2-of-4',
    'xloadgate-shard-2-of-4'
  ])('%j is no shard of artifact-name loadgate', (name) => {
    expect(shardOfArtifact('loadgate', name)).toBeUndefined()
  })
})

describe('selectShardArtifacts', () => {
  const a = (id: number, name: string, more: { expired?: boolean; created_at?: string } = {}) => ({ id, name, expired: false, ...more })

  it("keeps this step's unexpired shards, by K, the newest of a name", () => {
    const selected = selectShardArtifacts(
      [
        a(1, 'loadgate-shard-3-of-3'),
        a(2, 'loadgate'),
        a(3, 'loadgate-shard-1-of-3', { created_at: '2026-11-24T10:00:00Z' }),
        a(4, 'loadgate-shard-1-of-3', { created_at: '2026-11-24T10:05:00Z' }), // a re-run job's
        a(5, 'loadgate-shard-2-of-3', { expired: true }),
        a(6, 'perf-api-shard-2-of-3'),
        a(7, 'loadgate-shard-10-of-12')
      ],
      'loadgate'
    )
    expect(selected).toEqual([
      { id: 4, name: 'loadgate-shard-1-of-3', shard: { index: 1, count: 3 } },
      { id: 1, name: 'loadgate-shard-3-of-3', shard: { index: 3, count: 3 } },
      { id: 7, name: 'loadgate-shard-10-of-12', shard: { index: 10, count: 12 } }
    ])
  })

  it('finds none among other artifacts', () => {
    expect(selectShardArtifacts([a(1, 'loadgate'), a(2, 'report')], 'loadgate')).toEqual([])
  })
})
