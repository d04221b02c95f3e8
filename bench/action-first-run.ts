/**
 * The wall time of a first action run, as the integration harness runs the bundled action
 * (action/__tests__/integration/harness.ts), against the stand-in GitHub API
 * (action/__tests__/integration/standin.ts). Run by bench/action-first-run.sh, from a fresh
 * copy of the repository (so `target/` there is empty), with Node 24 (it strips the types).
 *
 *   node bench/action-first-run.ts release ARCHIVE   the release holds ARCHIVE (this runner's
 *                                                    target) and its .sha256; cold tool cache,
 *                                                    then a second run on the warm one
 *   node bench/action-first-run.ts build             no release: the action builds the engine
 *                                                    from its source (cargo build --profile
 *                                                    fallback), with the caller's CARGO_HOME
 *
 * Each run is given a spec the engine rejects (exit code 2), so that it stops right after the
 * engine has been got and has answered once: the figure is the action's time to a working
 * engine. `release` also times a whole run with the integration tests' 4 s spec.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { ACTION_ROOT, freePort, runAction, spec, type ActionRun } from '../action/__tests__/integration/harness.ts'
import { StandIn } from '../action/__tests__/integration/standin.ts'

const [mode, archive] = process.argv.slice(2)
const version = readFileSync(join(ACTION_ROOT, 'engine', 'Cargo.toml'), 'utf8').match(/^version = "([^"]+)"/m)![1]

const api = new StandIn()
await api.start()
const ws = mkdtempSync(join(tmpdir(), 'loadgate-first-run-ws-'))
mkdirSync(join(ws, 'perf'))
writeFileSync(join(ws, 'perf', 'invalid.yaml'), 'version: 1\nname: broken\ntargets: []\nload:\n  connections: 0\n')
writeFileSync(join(ws, 'perf', 'fast.yaml'), spec({ delay: '1ms', slo: 'p(95) < 1s' }))
const port = await freePort()
let runId = 500

async function timed(what: string, specFile: string, toolCache: string): Promise<ActionRun> {
  const started = process.hrtime.bigint()
  const r = await runAction({
    api: api.url,
    workspace: ws,
    event: { name: 'push', runId: runId++, branch: 'main' },
    inputs: { spec: specFile },
    env: { GITHUB_ACTION_REPOSITORY: 'loadgate/loadgate', LG_PORT: String(port) },
    toolCache
  })
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  const engine = r.stdout.split('\n').find((l) => l.startsWith('Engine: ')) ?? '(no Engine: line)'
  console.log(`${what}: ${seconds.toFixed(1)} s, exit code ${r.code}\n  ${engine}`)
  // cargo's own account of a build: what it downloaded and how long it compiled.
  for (const line of `${r.stdout}\n${r.stderr}`.split('\n')) if (/^\s*(Downloaded \d+ crates|Finished )/.test(line)) console.log(`  cargo: ${line.trim()}`)
  if (!r.stdout.includes('Engine: ')) console.log(r.stdout.slice(-3000))
  return r
}

try {
  if (mode === 'release') {
    const data = readFileSync(archive)
    const { createHash } = await import('node:crypto')
    const sum = createHash('sha256').update(data).digest('hex')
    const name = basename(archive)
    api.releases.set(
      `v${version}`,
      new Map([
        [name, data],
        [`${name}.sha256`, Buffer.from(`${sum}  ${name}\n`)]
      ])
    )
    console.log(`release v${version}: ${name}, ${(data.length / 1e6).toFixed(1)} MB`)
    const toolCache = mkdtempSync(join(tmpdir(), 'loadgate-first-run-tools-'))
    await timed('first run, cold tool cache, to the engine', 'perf/invalid.yaml', toolCache)
    await timed('second run, warm tool cache, to the engine', 'perf/invalid.yaml', toolCache)
    await timed('a whole run with the 4 s spec, cold tool cache', 'perf/fast.yaml', mkdtempSync(join(tmpdir(), 'loadgate-first-run-tools-')))
  } else if (mode === 'build') {
    await timed('first run, no release: built from source, to the engine', 'perf/invalid.yaml', mkdtempSync(join(tmpdir(), 'loadgate-first-run-tools-')))
  } else {
    throw new Error(`usage: node bench/action-first-run.ts release ARCHIVE | build`)
  }
} finally {
  await api.stop()
}
