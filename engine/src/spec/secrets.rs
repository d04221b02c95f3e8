//! Which parts of a request are secrets: header names and query keys (one rule for both), and
//! a URL with them taken out. The one-line runs (`loadgate quick`, `loadgate curl`) write their
//! specs with it; the machine lines (`--format jsonl|csv`) show URLs through [`shown_url`].
//!
//! A secret's value is never printed (not in the emitted spec, its `name:`, an error, the
//! console or a machine line): a one-line run's spec names a variable, `${LOADGATE_…}`, that
//! the one-line run answers and a user of the printed spec sets in the environment. URL
//! credentials (`user:pass@`) become an `Authorization: Basic` header (as curl sends them), so
//! a secret too.

use std::collections::BTreeMap;

/// Names that are secrets whole: after lower-casing, with `-` as `_`.
const SECRET_NAMES: &[&str] = &[
    "authorization",
    "proxy_authorization",
    "cookie",
    "key",
    "sig",
    "code",
    "jwt",
    "apikey",
];

/// Words that make a name a secret wherever they stand in it (`X-Amz-Security-Token`,
/// `access_token`, `client_secret`, `X-Goog-Signature`, `apiKey`); a name's words are split
/// at `-`, `_`, `.` and lower-to-upper case changes.
const SECRET_WORDS: &[&str] = &[
    "apikey",
    "auth",
    "authorization",
    "credential",
    "credentials",
    "password",
    "passwd",
    "pwd",
    "secret",
    "session",
    "sessionid",
    "signature",
    "token",
];

/// Whether a request header `name` or a URL query key `name` (as written, or
/// percent-decoded) holds a secret: `Authorization`, `Cookie`, `X-Api-Key`, `Private-Token`,
/// `X-Amz-Security-Token`, `apikey`, `access_token`, `api_key`, `sig`, `X-Amz-Signature`, ….
pub(crate) fn is_secret(name: &str) -> bool {
    let words = words(name);
    let joined = words.join("_");
    SECRET_NAMES.contains(&joined.as_str())
        || words.iter().any(|w| SECRET_WORDS.contains(&w.as_str()))
        || words.windows(2).any(|w| w[0] == "api" && w[1] == "key")
}

/// `name` in lower-case words: split at `-`, `_`, `.`, spaces and where a lower-case letter
/// or digit is followed by an upper-case one (`apiKey` → `api`, `key`).
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    words.extend((!word.is_empty()).then_some(word));
    words
}

/// The variable that holds a secret's value: `LOADGATE_`, `prefix`, and `name` in upper case
/// with every other character as `_` (`LOADGATE_PROXY_AUTHORIZATION`,
/// `LOADGATE_QUERY_ACCESS_TOKEN`); `_2`, `_3`, … when `taken` already holds it with another
/// value.
pub(crate) fn variable(
    prefix: &str,
    name: &str,
    value: &str,
    taken: &BTreeMap<String, String>,
) -> String {
    let upper: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    let base = format!("LOADGATE_{prefix}{upper}");
    let mut var = base.clone();
    let mut n = 1;
    while taken.get(&var).is_some_and(|v| v != value) {
        n += 1;
        var = format!("{base}_{n}");
    }
    var
}

/// A URL as a one-line run writes it: its credentials taken out, and the value of each
/// secret query parameter replaced by a variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SplitUrl {
    /// The URL without `user:pass@`, each secret query value as `${LOADGATE_QUERY_…}`; the
    /// rest exactly as given. Safe to print.
    pub(crate) written: String,
    /// `user:pass` from the URL, percent-decoded (`user:` without a password), if it had any.
    pub(crate) credentials: Option<String>,
}

/// Splits `url` (as given) into what may be written and its secrets; each secret query value
/// (as given, still percent-encoded, so that interpolation gives back the URL) goes into
/// `secrets` under its variable. Text that is not a URL is left to the spec's validation: only
/// what looks like `scheme://user:pass@host` and a `?query` is taken apart.
pub(crate) fn split_url(url: &str, secrets: &mut BTreeMap<String, String>) -> SplitUrl {
    let (mut written, credentials) = without_credentials(url);
    if let Some(q) = written.find('?') {
        let end = written[q..].find('#').map_or(written.len(), |f| q + f);
        let query = written[q + 1..end].to_string();
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, value)) if !value.is_empty() && is_secret(&decoded(key)) => {
                    let var = variable("QUERY_", &decoded(key), value, secrets);
                    secrets.insert(var.clone(), value.to_string());
                    format!("{key}=${{{var}}}")
                }
                _ => pair.to_string(),
            })
            .collect();
        written.replace_range(q + 1..end, &pairs.join("&"));
    }
    SplitUrl {
        written,
        credentials,
    }
}

/// The same URL for messages: every secret replaced by `${...}`.
pub(crate) fn shown_url(url: &str) -> String {
    let mut secrets = BTreeMap::new();
    let split = split_url(url, &mut secrets);
    let mut shown = split.written;
    for var in secrets.keys() {
        shown = shown.replace(&format!("${{{var}}}"), "${...}");
    }
    if split.credentials.is_some()
        && let Some(at) = shown.find("://")
    {
        shown.insert_str(at + 3, "${...}@");
    }
    shown
}

/// `url` without the `user:pass@` of its authority, and those credentials, percent-decoded.
fn without_credentials(url: &str) -> (String, Option<String>) {
    let Some(start) = url.find("://").map(|i| i + 3) else {
        return (url.to_string(), None);
    };
    let authority_end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    let Some(at) = url[start..authority_end].rfind('@').map(|i| start + i) else {
        return (url.to_string(), None);
    };
    let userinfo = &url[start..at];
    let credentials = match userinfo.split_once(':') {
        Some((user, pass)) => format!("{}:{}", decoded(user), decoded(pass)),
        None => format!("{}:", decoded(userinfo)),
    };
    (
        format!("{}{}", &url[..start], &url[at + 1..]),
        Some(credentials),
    )
}

/// `text` percent-decoded (`+` stays `+`); invalid UTF-8 replaced.
fn decoded(text: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", text.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_of_headers_and_query_keys() {
        for name in [
            "Authorization",
            "Proxy-Authorization",
            "Cookie",
            "X-Api-Key",
            "X-Auth-Token",
            "Private-Token",
            "X-Amz-Security-Token",
            "apikey",
            "api_key",
            "apiKey",
            "access_token",
            "token",
            "sig",
            "X-Amz-Signature",
            "client_secret",
            "password",
            "key",
        ] {
            assert!(is_secret(name), "{name}");
        }
        for name in [
            "Accept",
            "Content-Type",
            "page",
            "author",
            "q",
            "keyword",
            "User-Agent",
        ] {
            assert!(!is_secret(name), "{name}");
        }
    }

    #[test]
    fn credentials_and_secret_query_values_leave_the_url() {
        let mut secrets = BTreeMap::new();
        let split = split_url(
            "http://alice:pa%40ss@127.0.0.1:8080/api?page=2&access_token=T0K%2B&sig=&api_key=K#f",
            &mut secrets,
        );
        assert_eq!(
            split.written,
            "http://127.0.0.1:8080/api?page=2&access_token=${LOADGATE_QUERY_ACCESS_TOKEN}\
             &sig=&api_key=${LOADGATE_QUERY_API_KEY}#f"
        );
        assert_eq!(split.credentials.as_deref(), Some("alice:pa@ss"));
        assert_eq!(secrets["LOADGATE_QUERY_ACCESS_TOKEN"], "T0K%2B");
        assert_eq!(secrets["LOADGATE_QUERY_API_KEY"], "K");
        // Two values of one key: two variables.
        let mut secrets = BTreeMap::new();
        let split = split_url("http://h/?token=a&token=b&token=a", &mut secrets);
        assert_eq!(
            split.written,
            "http://h/?token=${LOADGATE_QUERY_TOKEN}&token=${LOADGATE_QUERY_TOKEN_2}\
             &token=${LOADGATE_QUERY_TOKEN}"
        );
        // No secrets: as given.
        let plain = "http://[::1]:9/a@b?x=1";
        assert_eq!(split_url(plain, &mut BTreeMap::new()).written, plain);
        assert_eq!(
            shown_url("https://u:p@h/x?token=t"),
            "https://${...}@h/x?token=${...}"
        );
    }
}
