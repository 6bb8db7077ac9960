// Lint config: typescript-eslint's recommended rules plus the house rules that keep the
// layers apart (env/ never imports vscode or webview/; webview/ never imports Node modules; protocol/ holds what both share).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'trainer/**', '.venv/**', '.venv-verl/**', '.venv-vllm/**', '.gpu-check/**', 'runs/**', 'out/**', '.cache/**', 'bin/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-eval': 'error',
      'no-new-func': 'error',
      'no-implied-eval': 'error',
    },
  },
  {
    files: ['env/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'vscode', message: 'env/ is editor-free: never import vscode here.' }],
        patterns: [{ group: ['**/webview/*', '**/webview/**'], message: 'env/ never depends on the UI: shared types live in protocol/.' }],
      }],
    },
  },
  {
    files: ['webview/**/*.ts', 'protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ group: ['node:*', 'fs', 'path', 'os', 'child_process', 'vscode'], message: 'webview/ is browser code: no Node or vscode modules.' }],
      }],
    },
  },
  {
    files: ['**/*.mjs', 'scripts/**', 'bench/**'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
