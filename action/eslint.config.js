import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'build/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error'
    },
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly' },
      parserOptions: { projectService: { allowDefaultProject: ['*.js', '*.ts', 'scripts/*.js'] }, tsconfigRootDir: import.meta.dirname }
    }
  }
)
