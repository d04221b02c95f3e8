//! Extractors, checked and compiled at plan time: a regular expression compiles, a JSON
//! pointer is one (RFC 6901), exactly one source is given.

use super::template::is_var_name;
use super::{Extractor, Source};
use crate::plan::Errors;
use crate::spec;

/// The extractors of one step (at `path`, e.g. `flows[0].steps[1]`); `slot(var)` is the
/// variable's slot. `None` when one of them is wrong (the errors say which).
pub(super) fn build_extractors(
    extract: &[spec::Extract],
    path: &str,
    slot: &dyn Fn(&str) -> usize,
    errors: &mut Errors,
) -> Option<Vec<Extractor>> {
    let before = errors.0.len();
    let mut out = Vec::with_capacity(extract.len());
    for (i, e) in extract.iter().enumerate() {
        let path = format!("{path}.extract[{i}]");
        if !is_var_name(&e.var) {
            errors.push(
                format!("{path}.var"),
                format!(
                    "`{}` is not a variable name: letters, digits, `_` and `-`, not starting \
                     with a digit or `-`",
                    e.var
                ),
            );
            continue;
        }
        if let Some(source) = source(e, &path, errors) {
            out.push(Extractor {
                slot: slot(&e.var),
                source,
                default: e.default.clone(),
            });
        }
    }
    (errors.0.len() == before).then_some(out)
}

/// The extractor's source, checked; `None` (and an error) when it is wrong.
fn source(e: &spec::Extract, path: &str, errors: &mut Errors) -> Option<Source> {
    let status = e.status == Some(true);
    let given = [
        e.json.is_some(),
        e.regex.is_some(),
        e.header.is_some(),
        e.cookie.is_some(),
        status,
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        errors.push(
            path,
            "give exactly one of `json`, `regex`, `header`, `cookie` or `status: true`",
        );
        return None;
    }
    if let Some(pointer) = &e.json {
        if let Err(message) = check_pointer(pointer) {
            errors.push(format!("{path}.json"), message);
            return None;
        }
        return Some(Source::Json(pointer.clone()));
    }
    if let Some(pattern) = &e.regex {
        return match regex::Regex::new(pattern) {
            Ok(regex) => Some(Source::Regex(regex)),
            Err(err) => {
                errors.push(
                    format!("{path}.regex"),
                    format!(
                        "`{pattern}` is not a valid regular expression: {}",
                        regex_reason(&err)
                    ),
                );
                None
            }
        };
    }
    if let Some(name) = &e.header {
        if !errors.printable(&format!("{path}.header"), name) {
            return None;
        }
        return Some(Source::Header(name.to_ascii_lowercase()));
    }
    if let Some(name) = &e.cookie {
        if !errors.printable(&format!("{path}.cookie"), name) {
            return None;
        }
        return Some(Source::Cookie(name.clone()));
    }
    Some(Source::Status)
}

/// Whether `pointer` is a JSON pointer (RFC 6901): empty (the whole document), or `/` and
/// reference tokens in which `~` is only ever `~0` or `~1`.
fn check_pointer(pointer: &str) -> Result<(), String> {
    if !(pointer.is_empty() || pointer.starts_with('/')) {
        return Err(format!(
            "`{pointer}` is not a JSON pointer: it starts with `/`, e.g. `/items/0/id` (or is \
             empty, for the whole body)"
        ));
    }
    let mut chars = pointer.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return Err(format!(
                "`{pointer}` is not a JSON pointer: `~` is written `~0` and `/` in a name `~1`"
            ));
        }
    }
    Ok(())
}

/// The reason of a regex error on one line (the syntax error's last line, without the
/// pattern drawn over it).
fn regex_reason(err: &regex::Error) -> String {
    let text = err.to_string();
    text.lines()
        .rev()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or(text.lines().last().unwrap_or_default())
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extract(var: &str) -> spec::Extract {
        spec::Extract {
            var: var.to_string(),
            json: None,
            regex: None,
            header: None,
            cookie: None,
            status: None,
            default: None,
        }
    }

    #[test]
    fn each_source_compiles() {
        let list = [
            spec::Extract {
                json: Some("/a/0".into()),
                ..extract("a")
            },
            spec::Extract {
                regex: Some(r#"id="(\d+)""#.into()),
                ..extract("b")
            },
            spec::Extract {
                header: Some("ETag".into()),
                default: Some(String::new()),
                ..extract("c")
            },
            spec::Extract {
                cookie: Some("session".into()),
                ..extract("d")
            },
            spec::Extract {
                status: Some(true),
                ..extract("e")
            },
        ];
        let mut errors = Errors::default();
        let slot = |v: &str| usize::from(v.as_bytes()[0] - b'a');
        let built = build_extractors(&list, "s", &slot, &mut errors).unwrap();
        assert!(errors.0.is_empty());
        assert!(matches!(&built[0].source, Source::Json(p) if p == "/a/0"));
        assert!(matches!(&built[1].source, Source::Regex(r) if r.captures_len() == 2));
        assert!(matches!(&built[2].source, Source::Header(h) if h == "etag"));
        assert_eq!(built[2].default.as_deref(), Some(""));
        assert!(matches!(&built[3].source, Source::Cookie(c) if c == "session"));
        assert!(matches!(built[4].source, Source::Status));
        let slots: Vec<usize> = built.iter().map(|e| e.slot).collect();
        assert_eq!(slots, [0, 1, 2, 3, 4]);
    }

    #[test]
    fn wrong_extractors_name_their_field() {
        let list = [
            spec::Extract {
                json: Some("token".into()),
                ..extract("a")
            },
            spec::Extract {
                json: Some("/a~2".into()),
                ..extract("a")
            },
            spec::Extract {
                regex: Some("id=(".into()),
                ..extract("a")
            },
            spec::Extract {
                json: Some("/a".into()),
                header: Some("x".into()),
                ..extract("a")
            },
            extract("a"),
            spec::Extract {
                status: Some(true),
                ..extract("1a")
            },
        ];
        let mut errors = Errors::default();
        assert!(build_extractors(&list, "s", &|_| 0, &mut errors).is_none());
        let got: Vec<(&str, &str)> = errors
            .0
            .iter()
            .map(|e| (e.path.as_str(), e.message.as_str()))
            .collect();
        assert_eq!(got.len(), 6, "{got:?}");
        assert_eq!(got[0].0, "s.extract[0].json");
        assert!(got[0].1.contains("starts with `/`"), "{}", got[0].1);
        assert_eq!(got[1].0, "s.extract[1].json");
        assert_eq!(got[2].0, "s.extract[2].regex");
        assert!(got[2].1.ends_with("unclosed group"), "{}", got[2].1);
        assert_eq!(got[3].0, "s.extract[3]");
        assert!(got[3].1.contains("exactly one"));
        assert_eq!(got[4].0, "s.extract[4]");
        assert_eq!(got[5].0, "s.extract[5].var");
    }
}
