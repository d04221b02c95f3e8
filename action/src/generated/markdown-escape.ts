// Generated from templates/markdown-escape.json by `npm run gen-types` (scripts/gen-escape.js).
// Do not edit: change the JSON, then run `npm run gen-types`.

/** How loadgate writes text into GitHub-flavoured Markdown (report.md, the PR comment, the job summary) so that it stays text, in a table cell too. The one definition: the engine embeds this file (engine/src/report/markdown_escape.rs) and the action's src/generated/markdown-escape.ts is generated from it (npm run gen-types; npm run check-types fails when stale). Each character is looked up in this order: hidden (written out as \u{hex}, its backslash escaped), backslash (a backslash before it), entities (replaced), break_after (followed by break), control (any other Unicode Cc character: replaced). markdown-escape-corpus.json holds the hostile inputs both sides are tested on. */
export const MARKDOWN_ESCAPE = {
  "hidden": [
    [
      1564,
      1564
    ],
    [
      8203,
      8207
    ],
    [
      8234,
      8238
    ],
    [
      8288,
      8292
    ],
    [
      8294,
      8297
    ],
    [
      65279,
      65279
    ]
  ],
  "backslash": "\\`*_[]|~!$",
  "entities": {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;"
  },
  "break_after": "@#",
  "break": "\u200b",
  "control": " "
} as const
