// The dashboard's lint (ESLint 9, pinned in layers/web; TestLint runs it): its recommended
// rules, which catch an undefined name and an unused import or variable, over the modules in
// static and their Node tests. The packages are imported from layers/web by path because this
// directory has no node_modules of its own.
import js from '../../layers/web/node_modules/@eslint/js/src/index.js';
import globals from '../../layers/web/node_modules/globals/index.js';

export default [
  { ignores: ['static/uplot.js'] },
  js.configs.recommended,
  {
    files: ['static/*.js'],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      // uPlot is the classic script the page loads before the dashboard's module.
      globals: { ...globals.browser, uPlot: 'readonly' }
    },
    rules: { 'no-unused-vars': ['error', { args: 'none', caughtErrors: 'none' }] }
  },
  {
    files: ['jstest/*.mjs'],
    languageOptions: { ecmaVersion: 2022, sourceType: 'module', globals: globals.nodeBuiltin }
  }
];
