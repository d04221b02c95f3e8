//! A curl command line (a browser's "Copy as cURL") read into a one-line run's request.
//!
//! The command comes as words (after `--`) or as one string, split as a POSIX shell would
//! (the shell-words crate: single and double quotes, backslashes). Options taken:
//!
//! | curl | request |
//! |---|---|
//! | `URL`, `--url URL` | the URL (one); its `user:pass@` becomes `Authorization: Basic …` (`spec/secrets.rs`) |
//! | `-X`, `--request` | the method |
//! | `-H`, `--header` | a header (repeatable) |
//! | `-d`, `--data`, `--data-ascii`, `--data-raw`, `--data-binary`, `--data-urlencode` | the body: several are joined with `&`; POST and `Content-Type: application/x-www-form-urlencoded` unless given; `--data-binary @FILE` is the file's bytes |
//! | `--compressed` | `compression: true` (without it, `false`) |
//! | `-L`, `--location` | follow 10 redirects (without it, none) |
//! | `-k`, `--insecure` | `tls.insecure_skip_verify: true` |
//! | `-u`, `--user USER:PASS` | `Authorization: Basic …` |
//! | `-A`, `--user-agent` | `User-Agent` |
//! | `-e`, `--referer` | `Referer` |
//! | `-b`, `--cookie NAME=VALUE` | `Cookie` |
//! | `--http1.1`, `--http2`, `--http3` | `protocol: h1`, `h2`, `h3` (the last one given) |
//! | `-s`, `--silent`, `-S`, `--show-error` | nothing (curl's own display) |
//!
//! Any other option is refused with its name: a run must never drop a part of the request.
//! Messages never quote a secret (`spec/secrets.rs`): a URL is shown with `${...}` in their place,
//! a secret header by its name alone.

use super::QuickError;
use super::spec_text::{Protocol, QUICK_REDIRECTS, Request};
use crate::spec::secrets::shown_url;

/// What an option does with its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    Url,
    Method,
    Header,
    Data,
    DataRaw,
    DataBinary,
    DataUrlencode,
    User,
    UserAgent,
    Referer,
    Cookie,
}

/// Options with a value: short letter (if any), long names.
const WITH_VALUE: &[(Option<char>, &[&str], Takes)] = &[
    (None, &["--url"], Takes::Url),
    (Some('X'), &["--request"], Takes::Method),
    (Some('H'), &["--header"], Takes::Header),
    (Some('d'), &["--data", "--data-ascii"], Takes::Data),
    (None, &["--data-raw"], Takes::DataRaw),
    (None, &["--data-binary"], Takes::DataBinary),
    (None, &["--data-urlencode"], Takes::DataUrlencode),
    (Some('u'), &["--user"], Takes::User),
    (Some('A'), &["--user-agent"], Takes::UserAgent),
    (Some('e'), &["--referer"], Takes::Referer),
    (Some('b'), &["--cookie"], Takes::Cookie),
];

/// Options without a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Switch {
    Compressed,
    Location,
    Insecure,
    Http2,
    Http3,
    Http11,
    /// Only changes what curl prints.
    Display,
}

const SWITCHES: &[(Option<char>, &[&str], Switch)] = &[
    (None, &["--compressed"], Switch::Compressed),
    (Some('L'), &["--location"], Switch::Location),
    (Some('k'), &["--insecure"], Switch::Insecure),
    (None, &["--http2"], Switch::Http2),
    (None, &["--http3"], Switch::Http3),
    (None, &["--http1.1"], Switch::Http11),
    (Some('s'), &["--silent"], Switch::Display),
    (Some('S'), &["--show-error"], Switch::Display),
];

/// The request being read.
#[derive(Default)]
struct Reading {
    request: Request,
    url: Option<String>,
    data: Vec<String>,
    data_file: Option<String>,
    compressed: bool,
    location: bool,
}

/// Reads a curl command: `words` as given after `--`, or one string holding the whole
/// command. The leading `curl` is optional. Errors name the option or word at fault.
pub(crate) fn parse(words: &[String]) -> Result<Request, QuickError> {
    let split;
    let words: &[String] = match words {
        [one] if one.trim_start().contains(char::is_whitespace) || one.contains('\'') => {
            split = shell_words::split(one)
                .map_err(|e| QuickError::Curl(format!("cannot split it as a shell would: {e}")))?;
            &split
        }
        _ => words,
    };
    let words = match words {
        [first, rest @ ..] if first == "curl" => rest,
        _ => words,
    };
    let mut reading = Reading::default();
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        i += 1;
        let mut next = || {
            let value = words.get(i).cloned();
            i += 1;
            value.ok_or_else(|| QuickError::Curl(format!("`{word}` needs a value")))
        };
        if let Some((_, _, takes)) = WITH_VALUE
            .iter()
            .find(|(_, l, _)| l.contains(&word.as_str()))
        {
            reading.take(*takes, word, next()?)?;
        } else if let Some((_, _, switch)) =
            SWITCHES.iter().find(|(_, l, _)| l.contains(&word.as_str()))
        {
            reading.switch(*switch);
        } else if word.starts_with("--") {
            return Err(unknown(word, None));
        } else if let Some(letters) = word.strip_prefix('-').filter(|l| !l.is_empty()) {
            for (at, letter) in letters.char_indices() {
                if let Some((_, _, takes)) = WITH_VALUE.iter().find(|(s, _, _)| *s == Some(letter))
                {
                    let rest = &letters[at + letter.len_utf8()..];
                    let value = if rest.is_empty() {
                        next()?
                    } else {
                        rest.to_string()
                    };
                    reading.take(*takes, &format!("-{letter}"), value)?;
                    break;
                }
                match SWITCHES.iter().find(|(s, _, _)| *s == Some(letter)) {
                    Some((_, _, switch)) => reading.switch(*switch),
                    None => return Err(unknown(&format!("-{letter}"), Some(word))),
                }
            }
        } else {
            reading.set_url(word)?;
        }
    }
    reading.finish()
}

/// The error for an option loadgate does not take (`within`: the word of combined short
/// options it is in, as `-v` in `-sv`).
fn unknown(option: &str, within: Option<&str>) -> QuickError {
    let within = within.map(|w| format!(" (in `{w}`)")).unwrap_or_default();
    QuickError::Curl(format!(
        "option `{option}`{within} is not taken by loadgate (it takes -X, -H, -d, --data, \
         --data-raw, --data-binary, --data-urlencode, --compressed, -k, -u, -A, -e, -b, \
         --http1.1, --http2, --http3, -L, --url, -s, -S; see docs/quick.md): remove it, or write the run as a spec"
    ))
}

impl Reading {
    fn set_url(&mut self, url: &str) -> Result<(), QuickError> {
        if let Some(first) = &self.url {
            return Err(QuickError::Curl(format!(
                "a second URL `{}` (after `{}`): give one URL per curl command",
                shown_url(url),
                shown_url(first)
            )));
        }
        self.url = Some(url.to_string());
        Ok(())
    }

    fn switch(&mut self, switch: Switch) {
        match switch {
            Switch::Compressed => self.compressed = true,
            Switch::Location => self.location = true,
            Switch::Insecure => self.request.insecure = true,
            // The last one given wins, as in curl.
            Switch::Http2 => self.request.protocol = Some(Protocol::H2),
            Switch::Http3 => self.request.protocol = Some(Protocol::H3),
            Switch::Http11 => self.request.protocol = Some(Protocol::H1),
            Switch::Display => {}
        }
    }

    fn take(&mut self, takes: Takes, option: &str, value: String) -> Result<(), QuickError> {
        let header = |name: &str, value: String| (name.to_string(), value);
        match takes {
            Takes::Url => self.set_url(&value)?,
            Takes::Method => self.request.method = Some(value.to_ascii_uppercase()),
            Takes::Header => {
                let (name, value) = value.split_once(':').ok_or_else(|| {
                    QuickError::Curl(format!(
                        "{option} {}: expected `Name: value`",
                        super::shown_header(&value)
                    ))
                })?;
                let header = (name.trim().to_string(), value.trim().to_string());
                self.request.headers.push(header);
            }
            Takes::Data if value.starts_with('@') => {
                return Err(QuickError::Curl(format!(
                    "`{option} {value}`: curl strips line breaks from the file; loadgate \
                     sends files as they are: use `--data-binary {value}`"
                )));
            }
            Takes::Data | Takes::DataRaw => self.data.push(value),
            Takes::DataBinary => match value.strip_prefix('@') {
                Some(file) => self.data_file = Some(file.to_string()),
                None => self.data.push(value),
            },
            Takes::DataUrlencode => self.data.push(urlencoded(option, &value)?),
            Takes::User => {
                if !value.contains(':') {
                    return Err(QuickError::Curl(format!(
                        "`{option}` without a password (curl would ask for it): give `USER:PASS`"
                    )));
                }
                self.request
                    .headers
                    .push(header("Authorization", super::basic(&value)));
            }
            Takes::UserAgent => self.request.headers.push(header("User-Agent", value)),
            Takes::Referer => self.request.headers.push(header("Referer", value)),
            Takes::Cookie if !value.contains('=') => {
                return Err(QuickError::Curl(format!(
                    "`{option} {value}` reads cookies from a file; give them as \
                     `NAME=VALUE; NAME2=VALUE2`"
                )));
            }
            Takes::Cookie => self.request.headers.push(header("Cookie", value)),
        }
        Ok(())
    }

    fn finish(self) -> Result<Request, QuickError> {
        let Reading {
            mut request,
            url,
            data,
            data_file,
            compressed,
            location,
        } = self;
        request.url = url.ok_or_else(|| QuickError::Curl("no URL".to_string()))?;
        if data_file.is_some() && !data.is_empty() {
            return Err(QuickError::Curl(
                "`--data-binary @FILE` with other data: give the body one way".to_string(),
            ));
        }
        let has_body = data_file.is_some() || !data.is_empty();
        if has_body {
            request.method.get_or_insert_with(|| "POST".to_string());
            let typed = request
                .headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("content-type"));
            if !typed {
                request.headers.push((
                    "Content-Type".to_string(),
                    "application/x-www-form-urlencoded".to_string(),
                ));
            }
        }
        request.body = (!data.is_empty()).then(|| data.join("&"));
        request.body_file = data_file;
        request.compression = Some(compressed);
        request.redirects = Some(if location { QUICK_REDIRECTS } else { 0 });
        Ok(request)
    }
}

/// `--data-urlencode`'s value: `content`, `=content` or `name=content`, the content
/// percent-encoded as a form value (`application/x-www-form-urlencoded`); the `@file` forms
/// are refused.
fn urlencoded(option: &str, value: &str) -> Result<String, QuickError> {
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    if value.starts_with('@') || value.split_once('@').is_some_and(|(n, _)| !n.contains('=')) {
        return Err(QuickError::Curl(format!(
            "`{option} {value}` reads a file: give the content inline"
        )));
    }
    Ok(match value.split_once('=') {
        Some(("", content)) => encode(content),
        Some((name, content)) => format!("{name}={}", encode(content)),
        None => encode(value),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        vec![text.to_string()]
    }

    #[test]
    fn a_firefox_copy_as_curl() {
        let r = parse(&words(
            "curl 'http://127.0.0.1:8080/api?q=1' -X POST -H 'Accept: application/json' \
             -H 'Cookie: sid=abc' --data-raw '{\"a\": \"it'\\''s\"}' --compressed -k",
        ))
        .unwrap();
        assert_eq!(r.url, "http://127.0.0.1:8080/api?q=1");
        assert_eq!(r.method.as_deref(), Some("POST"));
        assert_eq!(r.body.as_deref(), Some("{\"a\": \"it's\"}"));
        assert!(r.insecure);
        assert_eq!((r.compression, r.redirects), (Some(true), Some(0)));
        assert!(r.headers.contains(&("Cookie".into(), "sid=abc".into())));
    }

    #[test]
    fn short_options_combine_and_take_attached_values() {
        let r =
            parse(&["curl", "-sSLk", "-XPUT", "http://h/", "-dx=1", "-d", "y=2"].map(String::from))
                .unwrap();
        assert_eq!(r.method.as_deref(), Some("PUT"));
        assert_eq!(r.body.as_deref(), Some("x=1&y=2"));
        assert_eq!(r.redirects, Some(QUICK_REDIRECTS));
        assert!(r.insecure);
    }

    #[test]
    fn each_option_maps_to_its_request_field() {
        let r = parse(
            &[
                "curl",
                "--url",
                "https://h/x",
                "-A",
                "agent/1",
                "-e",
                "https://ref/",
                "-u",
                "user:pw",
                "-b",
                "a=1",
                "--http2",
                "--data-binary",
                "@body.bin",
                "--insecure",
            ]
            .map(String::from),
        )
        .unwrap();
        assert_eq!(r.url, "https://h/x");
        for header in [
            ("User-Agent", "agent/1"),
            ("Referer", "https://ref/"),
            ("Authorization", "Basic dXNlcjpwdw=="),
            ("Cookie", "a=1"),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ] {
            let header = (header.0.to_string(), header.1.to_string());
            assert!(r.headers.contains(&header), "{header:?} in {:?}", r.headers);
        }
        assert!(r.protocol == Some(Protocol::H2) && r.insecure);
        assert_eq!(r.body_file.as_deref(), Some("body.bin"));
        assert_eq!(r.method.as_deref(), Some("POST"));
        let r = parse(&words(
            "curl http://h/ --data-urlencode 'q=a b' --data 'x=1'",
        ))
        .unwrap();
        assert_eq!(r.body.as_deref(), Some("q=a+b&x=1"));
        assert_eq!((r.compression, r.redirects), (Some(false), Some(0)));
        let r = parse(&words("curl https://h/ --http2 --http3")).unwrap();
        assert_eq!(r.protocol, Some(Protocol::H3), "the last one given");
        let r = parse(&words("curl https://h/ --http1.1")).unwrap();
        assert_eq!(r.protocol, Some(Protocol::H1));
    }

    #[test]
    fn urlencode_forms() {
        assert_eq!(urlencoded("--data-urlencode", "a b").unwrap(), "a+b");
        assert_eq!(urlencoded("--data-urlencode", "=a&b").unwrap(), "a%26b");
        assert_eq!(urlencoded("--data-urlencode", "q=a b").unwrap(), "q=a+b");
        assert!(urlencoded("--data-urlencode", "q@file").is_err());
    }

    #[test]
    fn unknown_options_are_named() {
        for (command, option) in [
            ("curl http://h/ --proxy x", "`--proxy`"),
            ("curl http://h/ -sv", "`-v`"),
            ("curl -o out http://h/", "`-o`"),
        ] {
            let e = parse(&words(command)).unwrap_err().to_string();
            assert!(e.contains(option), "{command}: {e}");
        }
    }
}
