/** The action's entry point: only calls run(), which handles every error itself. */
import { run } from './main.js'

await run()
