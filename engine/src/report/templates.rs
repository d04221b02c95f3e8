//! The report templates (minijinja): embedded in the binary from the repository's `templates/`
//! folder, overridable file by file with `--templates DIR`.
//!
//! Escaping is automatic and chosen by the template's extension: `.html` and `.xml` get HTML
//! escaping (minijinja's), `.md` gets [`escape_markdown`] (`markdown_escape.rs`: the rules
//! shared with the action). Inside an HTML element of a Markdown
//! template (`<summary>`), where GitHub shows Markdown's backslashes as they are, a value goes
//! through the `html` filter instead ([`escape_html_text`]). A template marks trusted markup
//! (loadgate's own SVG charts) with `|safe`.

use std::path::{Path, PathBuf};

pub(crate) use super::markdown_escape::escape_markdown;
use crate::files::{MAX_TEMPLATE_BYTES, Problem};
use minijinja::value::Value;
use minijinja::{AutoEscape, Environment, Error, Output, State};

/// The Markdown report (PR comment, job summary).
pub(crate) const MARKDOWN: &str = "report.md";
/// The self-contained HTML report.
pub(crate) const HTML: &str = "report.html";
/// The JUnit XML report.
pub(crate) const JUNIT: &str = "junit.xml";
/// The dashboard over a history (`report --dashboard`).
pub(crate) const DASHBOARD: &str = "dashboard.html";

/// The templates compiled into the binary, by name.
const EMBEDDED: [(&str, &str); 4] = [
    (MARKDOWN, include_str!("../../templates/report.md")),
    (HTML, include_str!("../../templates/report.html")),
    (JUNIT, include_str!("../../templates/junit.xml")),
    (DASHBOARD, include_str!("../../templates/dashboard.html")),
];

/// Why a `--templates` folder cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("cannot use the templates folder `{path}`: {reason}")]
pub struct TemplatesError {
    /// The folder, as given.
    pub path: String,
    /// Why not, in words.
    pub reason: String,
}

/// Checks a `--templates` folder before it is used: it exists, is a folder, and holds at least
/// one of the templates it can override (`report.md`, `report.html`, `junit.xml`,
/// `dashboard.html`), so that a
/// mistyped folder is not silently replaced by the built-in templates.
pub(crate) fn check_folder(dir: &Path) -> Result<(), TemplatesError> {
    let error = |reason: String| TemplatesError {
        path: dir.display().to_string(),
        reason,
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(error("it is not a folder".to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(error("no such folder".to_string()));
        }
        Err(e) => return Err(error(e.kind().to_string())),
    }
    if EMBEDDED.iter().any(|(name, _)| dir.join(name).exists()) {
        Ok(())
    } else {
        Err(error(format!(
            "it holds none of the templates it could replace ({})",
            EMBEDDED.map(|(name, _)| name).join(", ")
        )))
    }
}

/// The template environment: a template from `dir` when it has one of that name, else the
/// embedded one.
pub(crate) fn environment(dir: Option<&Path>) -> Environment<'static> {
    let mut env = Environment::new();
    let dir: Option<PathBuf> = dir.map(Path::to_path_buf);
    env.set_loader(move |name| {
        if let Some(dir) = &dir {
            let path = dir.join(name);
            match crate::files::bounded_read_text(&path, MAX_TEMPLATE_BYTES, "the template") {
                Ok(text) => return Ok(Some(text)),
                Err(e)
                    if matches!(&e.problem, Problem::Io(io) if io.kind() == std::io::ErrorKind::NotFound) => {}
                Err(e) => {
                    return Err(Error::new(
                        minijinja::ErrorKind::TemplateNotFound,
                        e.to_string(),
                    ));
                }
            }
        }
        Ok(EMBEDDED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, text)| (*text).to_string()))
    });
    env.set_auto_escape_callback(|name| match name.rsplit('.').next() {
        Some("html" | "htm" | "xml" | "svg") => AutoEscape::Html,
        Some("md") => AutoEscape::Custom("markdown"),
        _ => AutoEscape::None,
    });
    env.set_formatter(escaping_formatter);
    env.add_filter("html", |text: &str| {
        Value::from_safe_string(escape_html_text(text))
    });
    env.set_keep_trailing_newline(true);
    env
}

/// Writes a value escaped as the template's extension asks: Markdown by [`escape_markdown`],
/// the rest by minijinja.
fn escaping_formatter(out: &mut Output, state: &State, value: &Value) -> Result<(), Error> {
    match state.auto_escape() {
        AutoEscape::Html if !value.is_safe() && value.as_str().is_some_and(needs_escape) => {
            let text = visible(value.as_str().unwrap_or_default());
            minijinja::escape_formatter(out, state, &Value::from(text))
        }
        AutoEscape::Custom("markdown") if !value.is_safe() => {
            let text = if value.is_none() || value.is_undefined() {
                String::new()
            } else {
                value.to_string()
            };
            out.write_str(&escape_markdown(&text))
                .map_err(|e| Error::new(minijinja::ErrorKind::WriteFailure, e.to_string()))
        }
        _ => minijinja::escape_formatter(out, state, value),
    }
}

/// Whether `c` is a control character other than a line break or a tab, or a hidden one
/// (`spec::is_hidden`: bidirectional controls, zero-width characters).
fn is_unsafe(c: char) -> bool {
    (c.is_control() && !matches!(c, '\n' | '\r' | '\t')) || crate::spec::is_hidden(c)
}

/// Whether `text` has a character that [`visible`] escapes.
fn needs_escape(text: &str) -> bool {
    text.chars().any(is_unsafe)
}

/// `text` for HTML and XML, before their escaping: line breaks and tabs as they are, other
/// control characters and the hidden ones written out (`\u{202e}`) as `spec::printable`
/// writes them, so that none is in the file and a reader sees where each was. (A character
/// reference, `&#x202E;`, would be read back into the character itself.)
pub(crate) fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_unsafe(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Escapes text for HTML inside a Markdown document (a `<summary>`, where GitHub does not
/// read Markdown, so a `\\` would show): `&`, `<`, `>`, `"` and `'` as entities and nothing
/// else, `@mentions` broken with a zero-width space, line breaks and other control characters
/// turned into spaces, hidden characters written out (`\u{202e}`).
pub(crate) fn escape_html_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if crate::spec::is_hidden(c) => out.extend(c.escape_default()),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '@' => out.push_str("@\u{200B}"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_escaping_keeps_names_as_text() {
        assert_eq!(
            escape_markdown("<script>alert(1)</script>"),
            "&lt;script&gt;alert(1)&lt;/script&gt;"
        );
        assert_eq!(escape_markdown("a|b"), "a\\|b");
        assert_eq!(escape_markdown("*[x](y)*"), "\\*\\[x\\](y)\\*");
        assert_eq!(escape_markdown("line\nbreak"), "line break");
        assert_eq!(escape_markdown("@team"), "@\u{200B}team");
        assert_eq!(
            escape_markdown("gnp.\u{202e}exe\u{2066}"),
            "gnp.\\\\u{202e}exe\\\\u{2066}"
        );
        assert_eq!(escape_html_text("a\u{200f}b"), "a\\u{200f}b");
        assert_eq!(visible("a\u{1b}\n\u{feff}"), "a\\u{1b}\n\\u{feff}");
    }

    #[test]
    fn html_text_escaping_leaves_markdown_characters_alone() {
        assert_eq!(
            escape_html_text("a|b *star* _u_ [x](y) \\ <i>&\"'"),
            "a|b *star* _u_ [x](y) \\ &lt;i&gt;&amp;&quot;&#39;"
        );
        assert_eq!(escape_html_text("@team\nx"), "@\u{200B}team x");
        // Through the `html` filter in a Markdown template: escaped once, not twice.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.md"), "{{ v | html }} / {{ v }}").unwrap();
        let env = environment(Some(dir.path()));
        let out = env
            .get_template("x.md")
            .unwrap()
            .render(minijinja::context! { v => "a|b<" })
            .unwrap();
        assert_eq!(out, "a|b&lt; / a\\|b&lt;");
    }

    #[test]
    fn escaping_follows_the_extension_and_overrides_win() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.md"), "md {{ v }}").unwrap();
        std::fs::write(dir.path().join("x.html"), "html {{ v }}").unwrap();
        std::fs::write(dir.path().join("x.txt"), "txt {{ v }}").unwrap();
        std::fs::write(dir.path().join(MARKDOWN), "mine").unwrap();
        let env = environment(Some(dir.path()));
        let render = |name: &str| {
            env.get_template(name)
                .unwrap()
                .render(minijinja::context! { v => "<b>|" })
                .unwrap()
        };
        assert_eq!(render("x.md"), "md &lt;b&gt;\\|");
        assert_eq!(render("x.html"), "html &lt;b&gt;|");
        assert_eq!(render("x.txt"), "txt <b>|");
        assert_eq!(render(MARKDOWN), "mine");
        // Not overridden: the embedded template.
        let junit = env.get_template(JUNIT).unwrap();
        assert!(junit.source().contains("testsuite"));
        assert!(environment(None).get_template("nope.md").is_err());
    }
}
