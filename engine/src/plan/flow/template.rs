//! Request templates: `{{name}}` in a step's (or a target's) path, header values and body,
//! compiled once into a [`RequestTemplate`]. A name is a variable, or a generated value
//! ([`Gen`](crate::plan::target::Gen): `uuid`, `random_int(A,B)`, `timestamp_ms`, `vu`,
//! `iteration`).
//!
//! Each `{{name}}` is first replaced by a marker (a string that occurs nowhere else in the
//! step's request, made of letters and digits so that URL parsing keeps it as it is); the
//! request is then built as a target's is, and its bytes split at the markers into literal
//! parts and variable slots.

use super::{Part, RequestTemplate};

/// Longest variable name, in bytes.
const MAX_NAME: usize = 128;
/// Digits of a marker's index: at most 10,000 variables in one step's request.
const INDEX_DIGITS: usize = 4;

/// The markers of one step: `{nonce}{index:04}` stands for the `index`th `{{name}}` found.
#[derive(Debug)]
pub(super) struct Markers {
    /// Begins with `Z`, which occurs nowhere else in it: no marker overlaps another match.
    nonce: String,
    /// The variable of each marker, by index, with the field it was written in.
    pub(super) names: Vec<(String, String)>,
}

impl Markers {
    /// Markers whose nonce occurs in none of `texts` (everything the request is built from).
    pub(super) fn new<'a>(texts: impl Iterator<Item = &'a [u8]> + Clone) -> Markers {
        let mut nonce = String::from("Zlgvar");
        while texts
            .clone()
            .any(|t| t.windows(nonce.len()).any(|w| w == nonce.as_bytes()))
        {
            nonce.push('q');
        }
        Markers {
            nonce,
            names: Vec::new(),
        }
    }

    /// `text` (the field at `field`) with each `{{name}}` replaced by a new marker.
    ///
    /// Errors: a `{{` that does not start a `{{name}}`, or too many variables.
    pub(super) fn mark(&mut self, field: &str, text: &[u8]) -> Result<Vec<u8>, String> {
        let mut out = Vec::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = find(rest, b"{{") {
            out.extend_from_slice(&rest[..start]);
            let after = &rest[start + 2..];
            let (name, len) = slot(after).ok_or_else(|| {
                let shown: String = String::from_utf8_lossy(after).chars().take(24).collect();
                format!(
                    "`{{{{{shown}` does not start a variable: write `{{{{name}}}}` (letters, digits, \
                     `_` and `-`; spaces inside the braces allowed) or a generated value such as \
                     `{{{{random_int(1,100)}}}}`"
                )
            })?;
            if self.names.len() >= 10_usize.pow(INDEX_DIGITS as u32) {
                return Err("more than 10000 variables in one request".to_string());
            }
            out.extend_from_slice(self.nonce.as_bytes());
            out.extend_from_slice(format!("{:04}", self.names.len()).as_bytes());
            self.names.push((name, field.to_string()));
            rest = &after[len..];
        }
        out.extend_from_slice(rest);
        Ok(out)
    }

    /// [`Self::mark`] for text.
    pub(super) fn mark_str(&mut self, field: &str, text: &str) -> Result<String, String> {
        let marked = self.mark(field, text.as_bytes())?;
        Ok(String::from_utf8(marked).expect("markers are ASCII, put between whole characters"))
    }

    /// `bytes` split into literal parts and the parts of its markers (`part` maps a marker's
    /// index to its variable's slot or its generated value).
    pub(super) fn split(&self, bytes: &[u8], part: &dyn Fn(usize) -> Part) -> Vec<Part> {
        let mut parts = Vec::new();
        let mut rest = bytes;
        while let Some((start, index)) = self.next_marker(rest) {
            if start > 0 {
                parts.push(Part::Literal(rest[..start].into()));
            }
            parts.push(part(index));
            rest = &rest[start + self.nonce.len() + INDEX_DIGITS..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.into()));
        }
        parts
    }

    /// `text` with each marker replaced by `with(index)`.
    pub(super) fn replace(&self, text: &str, with: &dyn Fn(usize) -> String) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some((start, index)) = self.next_marker(rest.as_bytes()) {
            out.push_str(&rest[..start]);
            out.push_str(&with(index));
            rest = &rest[start + self.nonce.len() + INDEX_DIGITS..];
        }
        out.push_str(rest);
        out
    }

    /// `text` with each marker back as the `{{name}}` it stands for: as written.
    pub(super) fn unmark(&self, text: &str) -> String {
        self.replace(text, &|i| format!("{{{{{}}}}}", self.names[i].0))
    }

    /// `text` with each marker removed (every variable empty).
    pub(super) fn empty(&self, text: &str) -> String {
        self.replace(text, &|_| String::new())
    }

    /// Where the first marker of `bytes` starts, and its index.
    fn next_marker(&self, bytes: &[u8]) -> Option<(usize, usize)> {
        let start = find(bytes, self.nonce.as_bytes())?;
        let digits =
            bytes.get(start + self.nonce.len()..start + self.nonce.len() + INDEX_DIGITS)?;
        let index = std::str::from_utf8(digits).ok()?.parse().ok()?;
        Some((start, index))
    }

    /// Where the first marker of `bytes` starts.
    pub(super) fn first(&self, bytes: &[u8]) -> Option<usize> {
        self.next_marker(bytes).map(|(start, _)| start)
    }
}

/// The template of an HTTP/1.1 request built by `request::request_bytes` from marked parts:
/// `bytes` is the whole request. `body_len` is the length of its body in those bytes;
/// `own_length`: the spec gives `Content-Length`.
pub(super) fn compile(
    markers: &Markers,
    bytes: &[u8],
    body_len: usize,
    own_length: bool,
    part: &dyn Fn(usize) -> Part,
) -> RequestTemplate {
    let (head, body) = bytes.split_at(bytes.len() - body_len);
    // `head` ends with the blank line; the template's head keeps the last header's CRLF.
    let mut head = &head[..head.len() - 2];
    let body = markers.split(body, part);
    let body_has_slots = body.iter().any(|p| !matches!(p, Part::Literal(_)));
    let content_length = body_has_slots && !own_length;
    if content_length {
        // `request_bytes` added it last, with the marked body's length: it is added per
        // request instead.
        let added = format!("Content-Length: {body_len}\r\n");
        head = head
            .strip_suffix(added.as_bytes())
            .expect("request_bytes adds Content-Length last");
    }
    RequestTemplate {
        head: markers.split(head, part),
        body,
        content_length,
    }
}

/// The name of the `{{name}}` (or `{{name(args)}}`, written back without spaces) that starts
/// at `after` (the text after `{{`) and the length up to and with its `}}`; `None` when there
/// is none.
fn slot(after: &[u8]) -> Option<(String, usize)> {
    let spaces = |b: &[u8]| b.iter().take_while(|c| **c == b' ').count();
    let lead = spaces(after);
    let name_len = after[lead..]
        .iter()
        .take(MAX_NAME + 1)
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c == b'-')
        .count();
    let name = std::str::from_utf8(&after[lead..lead + name_len]).ok()?;
    if !is_var_name(name) {
        return None;
    }
    let mut name = name.to_string();
    let mut end = lead + name_len;
    if after[end..].starts_with(b"(") {
        // Arguments: integers and commas (`random_int(1, 1000)`).
        let args_len = after[end + 1..]
            .iter()
            .take(MAX_NAME + 1)
            .take_while(|c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b',' | b' '))
            .count();
        if after.get(end + 1 + args_len) != Some(&b')') {
            return None;
        }
        let args = std::str::from_utf8(&after[end + 1..end + 1 + args_len]).ok()?;
        name = format!("{name}({})", args.replace(' ', ""));
        end += args_len + 2;
    }
    end += spaces(&after[end..]);
    after[end..].starts_with(b"}}").then_some((name, end + 2))
}

/// A variable name: letters, digits, `_` and `-`, not starting with a digit or `-`, at most
/// 128 bytes.
pub(crate) fn is_var_name(name: &str) -> bool {
    name.len() <= MAX_NAME
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_names_with_spaces_and_splits_them_back() {
        let mut markers = Markers::new([b"Zlgvar0000 is taken".as_slice()].into_iter());
        assert_eq!(markers.nonce, "Zlgvarq");
        let marked = markers.mark_str("body", "a{{ x }}b{{y-1}}{{x}}").unwrap();
        assert_eq!(marked, "aZlgvarq0000bZlgvarq0001Zlgvarq0002");
        let names: Vec<&str> = markers.names.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["x", "y-1", "x"]);
        let slot = |i: usize| Part::Var([7, 8, 7][i]);
        assert_eq!(
            markers.split(marked.as_bytes(), &slot),
            [
                Part::Literal(b"a".as_slice().into()),
                Part::Var(7),
                Part::Literal(b"b".as_slice().into()),
                Part::Var(8),
                Part::Var(7),
            ]
        );
        assert_eq!(markers.unmark(&marked), "a{{x}}b{{y-1}}{{x}}");
        assert_eq!(markers.empty(&marked), "ab");
    }

    #[test]
    fn a_brace_pair_that_starts_no_variable_is_an_error() {
        for text in [
            "{{}}", "{{a b}}", "{{1a}}", "{{a}", "x {{ a", "{{f(x)}}", "{{f(1}}",
        ] {
            let mut markers = Markers::new(std::iter::empty());
            let err = markers.mark_str("f", text).unwrap_err();
            assert!(err.contains("does not start a variable"), "{text}: {err}");
        }
        let mut markers = Markers::new(std::iter::empty());
        assert_eq!(markers.mark_str("f", "{ {a} }").unwrap(), "{ {a} }");
    }

    #[test]
    fn a_generator_with_arguments_is_one_name_written_without_spaces() {
        let mut markers = Markers::new(std::iter::empty());
        let marked = markers
            .mark_str("body", "{{ random_int( -1, 20 ) }}/{{uuid}}")
            .unwrap();
        let names: Vec<&str> = markers.names.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["random_int(-1,20)", "uuid"]);
        assert_eq!(markers.unmark(&marked), "{{random_int(-1,20)}}/{{uuid}}");
    }
}
