//! Text written into GitHub-flavoured Markdown (`report.md`, the PR comment, the job summary)
//! so that it stays text, also inside a table cell: one definition for the engine and the
//! action, `templates/markdown-escape.json`, embedded here and generated into the action's
//! `src/generated/markdown-escape.ts`; both are tested on the hostile inputs of
//! `templates/markdown-escape-corpus.json` with the same expected outputs.
//!
//! Why those characters (names, URLs, checks and error texts come from specs and servers,
//! which a pull request can change):
//! - hidden characters (bidirectional controls and zero-width format characters,
//!   `spec::is_hidden`: "Trojan Source", CVE-2021-42574) are written out as `\u{202e}`, their
//!   backslash escaped, so that a name cannot show something other than what it is;
//! - `` \ ` * _ [ ] | ~ ! $ `` get a backslash (CommonMark's escape of ASCII punctuation):
//!   `\` so that no escape of ours is undone, `` ` `` code spans, `*` `_` emphasis, `[` `]`
//!   links and `!` images, `|` a table cell's end, `~` GFM's strikethrough, `$` GitHub's math;
//! - `&`, `<` and `>` are entities: no raw HTML (`<script>`, `<img>`, `<details>`), no entity
//!   of the input's read as a character, no `<https://...>` autolink;
//! - `@` and `#` are followed by a zero-width space: GitHub links `@user`, `@org/team` (which
//!   notifies them) and `#123` (which links and back-references an issue) after Markdown is
//!   read, so a backslash does not stop them, and the space also stops `#` opening a heading;
//! - line breaks and other control characters (Unicode `Cc`) become spaces: a line break would
//!   end a table row or start a block (a heading, a list, a quote).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Deserialize;

/// The rules of `templates/markdown-escape.json` (its `$comment` says the order they apply in).
#[derive(Debug, Deserialize)]
struct Rules {
    /// Inclusive ranges of code points written out as `\\u{hex}`.
    hidden: Vec<(u32, u32)>,
    /// Characters escaped with a backslash.
    backslash: String,
    /// Characters replaced by an HTML entity.
    entities: BTreeMap<char, String>,
    /// Characters followed by [`Rules::r#break`].
    break_after: String,
    /// What follows a character of [`Rules::break_after`]: a zero-width space.
    r#break: String,
    /// What replaces any other control character (Unicode `Cc`).
    control: String,
}

/// The shared definition, embedded at compile time.
const DEFINITION: &str = include_str!("../../templates/markdown-escape.json");

/// The rules, read once from [`DEFINITION`] (a unit test reads it, so a broken file fails
/// the tests, never a run).
static RULES: LazyLock<Rules> =
    LazyLock::new(|| serde_json::from_str(DEFINITION).expect("templates/markdown-escape.json"));

/// Escapes `text` for GitHub-flavoured Markdown by the shared rules (see the module
/// documentation): the result shows `text` as it is, in running text or a table cell.
pub(crate) fn escape_markdown(text: &str) -> String {
    let rules = &*RULES;
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        let code = u32::from(c);
        if rules
            .hidden
            .iter()
            .any(|(low, high)| (*low..=*high).contains(&code))
        {
            out.push('\\');
            out.extend(c.escape_default());
        } else if rules.backslash.contains(c) {
            out.push('\\');
            out.push(c);
        } else if let Some(entity) = rules.entities.get(&c) {
            out.push_str(entity);
        } else if rules.break_after.contains(c) {
            out.push(c);
            out.push_str(&rules.r#break);
        } else if c.is_control() {
            out.push_str(&rules.control);
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One case of the shared corpus.
    #[derive(Deserialize)]
    struct Case {
        why: String,
        input: String,
        output: String,
    }

    #[derive(Deserialize)]
    struct Corpus {
        cases: Vec<Case>,
    }

    #[test]
    fn the_shared_corpus_escapes_as_expected() {
        let corpus: Corpus =
            serde_json::from_str(include_str!("../../templates/markdown-escape-corpus.json"))
                .unwrap();
        assert!(corpus.cases.len() >= 10);
        for case in &corpus.cases {
            assert_eq!(escape_markdown(&case.input), case.output, "{}", case.why);
        }
    }

    #[test]
    fn the_hidden_characters_are_the_specs() {
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            let code = u32::from(c);
            let listed = RULES.hidden.iter().any(|(l, h)| (*l..=*h).contains(&code));
            assert_eq!(listed, crate::spec::is_hidden(c), "U+{code:04X}");
        }
    }
}
