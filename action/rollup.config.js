// Bundles src/ and its dependencies into one ES module, dist/index.js, which action.yml runs.
// `OUT_DIR` writes the bundle elsewhere (check-dist compares a fresh bundle with the committed one).
import commonjs from '@rollup/plugin-commonjs'
import json from '@rollup/plugin-json'
import { nodeResolve } from '@rollup/plugin-node-resolve'
import typescript from '@rollup/plugin-typescript'

const outDir = process.env.OUT_DIR ?? 'dist'

export default {
  input: 'src/index.ts',
  // Optional, loaded with a guarded dynamic import only for Negotiate proxy authentication.
  external: ['kerberos'],
  output: {
    file: `${outDir}/index.js`,
    format: 'es',
    esModule: true,
    sourcemap: false,
    inlineDynamicImports: true
  },
  plugins: [
    typescript({ tsconfig: './tsconfig.build.json', outDir, noEmitOnError: true }),
    nodeResolve({ preferBuiltins: true, exportConditions: ['node'] }),
    commonjs(),
    json()
  ],
  onwarn(warning, warn) {
    // Dependencies (@azure, @protobuf-ts) use `this` at module level and circular imports; harmless.
    if (warning.code === 'THIS_IS_UNDEFINED' || warning.code === 'CIRCULAR_DEPENDENCY') return
    warn(warning)
  }
}
