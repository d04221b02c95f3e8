// The end of each generator (gen-types.js, gen-escape.js): write the generated file, or with
// `--check` write nothing and fail when the committed file is not what its source generates.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { dirname, relative, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const action = join(dirname(fileURLToPath(import.meta.url)), '..')

/** Writes `text` to `outFile`, or checks it (`--check`); `source` names what generates it. */
export function writeOrCheck(outFile, text, source) {
  const name = relative(action, outFile)
  if (process.argv.includes('--check')) {
    let committed = ''
    try {
      committed = readFileSync(outFile, 'utf8')
    } catch {
      // reported below as stale
    }
    if (committed !== text) {
      console.error(`${name} is stale: it is not what ${source} generates.\nRun \`npm run gen-types\` in action/ and commit it.`)
      process.exitCode = 1
    } else {
      console.log(`${name} is up to date with ${source}`)
    }
  } else {
    mkdirSync(dirname(outFile), { recursive: true })
    writeFileSync(outFile, text)
    console.log(`wrote ${outFile}`)
  }
}
