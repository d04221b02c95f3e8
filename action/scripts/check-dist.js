// Fails when the committed bundle (dist/index.js) is not what the sources build to.
// Builds a fresh bundle into a temporary folder and compares; never writes to dist/.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const out = mkdtempSync(join(tmpdir(), 'loadgate-check-dist-'))
try {
  execFileSync(process.execPath, ['node_modules/rollup/dist/bin/rollup', '-c', 'rollup.config.js', '--silent'], {
    env: { ...process.env, OUT_DIR: out },
    stdio: 'inherit'
  })
  const fresh = readFileSync(join(out, 'index.js'), 'utf8')
  let committed = ''
  try {
    committed = readFileSync('dist/index.js', 'utf8')
  } catch {
    // reported below as stale
  }
  if (fresh !== committed) {
    const a = committed.split('\n')
    const b = fresh.split('\n')
    let line = 0
    while (line < a.length && line < b.length && a[line] === b[line]) line++
    console.error(
      `dist/index.js is stale: it differs from a fresh build from line ${line + 1} on ` +
        `(committed ${a.length} lines, fresh ${b.length}).\nRun \`npm run build\` in action/ and commit dist/.`
    )
    process.exitCode = 1
  } else {
    console.log('dist/index.js is up to date with src/')
  }
} finally {
  rmSync(out, { recursive: true, force: true })
}
