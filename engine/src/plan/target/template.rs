//! Requests rendered per request: a [`RequestTemplate`] of literal bytes, variable slots and
//! generated values ([`Gen`]), compiled once at plan time (`plan/flow/template.rs`), for a
//! flow's step or a target with `{{var}}`; and the rows of a data file ([`DataPlan`]) that
//! feed the variables.

use std::io::Write;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// A plain target's request rendered per request: `{{column}}` of its data file and
/// generated values.
#[derive(Debug, Clone)]
pub(crate) struct TargetTemplate {
    /// The request; its slots are the data file's columns, in the file's order.
    pub(crate) request: RequestTemplate,
    /// The data file's rows, one per request; `None` without `data` (generated values only).
    pub(crate) data: Option<DataPlan>,
}

/// A data file's rows, read and checked at plan time.
#[derive(Debug, Clone)]
pub(crate) struct DataPlan {
    /// How rows are handed out to iterations (a target's: to requests).
    pub(crate) order: DataOrder,
    /// Row `r`, column `c`: the value of slot `c` (columns are the first slots).
    pub(crate) rows: Arc<[Box<[String]>]>,
}

/// How a data file's rows are handed out, one per iteration (a target's: per request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DataOrder {
    /// The next row, for all virtual users together, starting again after the last.
    Sequential,
    /// A row drawn uniformly at random.
    Random,
    /// Each row to one iteration only; when all are used, the run ends.
    Once,
}

/// A request whose bytes are literal segments, variable slots and generated values, compiled
/// once at plan time.
///
/// The head is the HTTP/1.1 request line and headers without the blank line that ends them;
/// `Cookie` (from the jar) and `Content-Length` (of the rendered body) are added per request.
#[derive(Debug, Clone)]
pub(crate) struct RequestTemplate {
    /// Request line and headers, each header ending in CRLF.
    pub(crate) head: Vec<Part>,
    /// The body.
    pub(crate) body: Vec<Part>,
    /// Add `Content-Length` (the spec did not give one, and the method or body needs one).
    pub(crate) content_length: bool,
}

/// A segment of a [`RequestTemplate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    /// Bytes sent as they are.
    Literal(Box<[u8]>),
    /// The value of a variable slot.
    Var(usize),
    /// A value generated per request.
    Gen(Gen),
}

/// A value generated for each request that holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gen {
    /// `{{uuid}}`: a random (version 4) UUID, RFC 9562 §5.4, lower-case hex.
    Uuid,
    /// `{{random_int(A,B)}}`: an integer drawn uniformly from A to B, both included.
    RandomInt(i64, i64),
    /// `{{timestamp_ms}}`: the Unix time when the request is rendered, in milliseconds.
    TimestampMs,
    /// `{{vu}}`: the virtual user's number within the run, from 1 (k6's `__VU`).
    Vu,
    /// `{{iteration}}`: the virtual user's iteration (a target's: request) count, from 0
    /// (k6's `__ITER`).
    Iteration,
}

/// What generated values are drawn from: the virtual user's random numbers, its number and
/// its iteration count.
pub(crate) struct Generators<'a> {
    pub(crate) rng: &'a mut fastrand::Rng,
    /// The virtual user's number within the run, from 1.
    pub(crate) vu: u64,
    /// Its iteration count, from 0.
    pub(crate) iteration: u64,
}

impl Gen {
    /// The generator `{{name}}` names (`random_int(1, 1000)` written without spaces); `None`
    /// when it names none.
    ///
    /// Errors: `random_int` whose bounds are not two integers, the first not above the
    /// second.
    pub(crate) fn parse(name: &str) -> Option<Result<Gen, String>> {
        Some(Ok(match name {
            "uuid" => Gen::Uuid,
            "timestamp_ms" => Gen::TimestampMs,
            "vu" => Gen::Vu,
            "iteration" => Gen::Iteration,
            _ => {
                let args = name.strip_prefix("random_int(")?.strip_suffix(')')?;
                let bounds = args
                    .split_once(',')
                    .and_then(|(a, b)| Some((a.parse::<i64>().ok()?, b.parse::<i64>().ok()?)));
                return Some(match bounds {
                    Some((a, b)) if a <= b => Ok(Gen::RandomInt(a, b)),
                    Some(_) => Err(format!(
                        "`{{{{{name}}}}}`: the first bound is above the second"
                    )),
                    None => Err(format!(
                        "`{{{{{name}}}}}`: write `random_int(A,B)` with two integers, A ≤ B"
                    )),
                });
            }
        }))
    }

    /// Writes a value into `out`; `None`: nothing (the plan's placeholder request).
    fn write(self, gens: Option<&mut Generators<'_>>, out: &mut Vec<u8>) {
        let Some(gens) = gens else {
            return;
        };
        // Writing into a Vec cannot fail.
        let _ = match self {
            Gen::Uuid => {
                write_uuid(gens.rng.u128(..), out);
                Ok(())
            }
            Gen::RandomInt(a, b) => write!(out, "{}", gens.rng.i64(a..=b)),
            Gen::TimestampMs => {
                let ms = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis());
                write!(out, "{ms}")
            }
            Gen::Vu => write!(out, "{}", gens.vu),
            Gen::Iteration => write!(out, "{}", gens.iteration),
        };
    }
}

/// A version 4 UUID (RFC 9562 §5.4) from 128 random bits: version and variant bits set,
/// written as 36 lower-case characters `8-4-4-4-12`.
fn write_uuid(random: u128, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bits = (random & !(0xF << 76) & !(0x3 << 62)) | (0x4 << 76) | (0x2 << 62);
    let bytes = bits.to_be_bytes();
    for (i, byte) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push(b'-');
        }
        out.push(HEX[usize::from(byte >> 4)]);
        out.push(HEX[usize::from(byte & 0xF)]);
    }
}

impl RequestTemplate {
    /// Renders the request's bytes into `out` (cleared first): the head, then
    /// `Cookie: {cookie}` when given, `Content-Length` when needed, the blank line and the
    /// body. `value(slot)` is a variable's current value; `gens` draws generated values
    /// (`None`: they are left empty). No allocation once `out` is large enough.
    ///
    /// Errors: the first slot whose variable has no value.
    pub(crate) fn render<'v>(
        &self,
        value: impl Fn(usize) -> Option<&'v [u8]>,
        cookie: Option<&[u8]>,
        mut gens: Option<&mut Generators<'_>>,
        out: &mut Vec<u8>,
    ) -> Result<(), usize> {
        out.clear();
        let mut put = |parts: &[Part], out: &mut Vec<u8>| -> Result<(), usize> {
            for part in parts {
                match part {
                    Part::Literal(bytes) => out.extend_from_slice(bytes),
                    Part::Var(slot) => out.extend_from_slice(value(*slot).ok_or(*slot)?),
                    Part::Gen(generator) => generator.write(gens.as_deref_mut(), out),
                }
            }
            Ok(())
        };
        put(&self.head, out)?;
        if let Some(cookie) = cookie.filter(|c| !c.is_empty()) {
            out.extend_from_slice(b"Cookie: ");
            out.extend_from_slice(cookie);
            out.extend_from_slice(b"\r\n");
        }
        let head_end = out.len();
        put(&self.body, out)?;
        let body_len = out.len() - head_end;
        // The body went in first to learn its length; the length and blank line go before it.
        let mut tail = [0u8; 48];
        let mut cursor = std::io::Cursor::new(&mut tail[..]);
        if self.content_length {
            write!(cursor, "Content-Length: {body_len}\r\n").expect("48 bytes hold it");
        }
        cursor.write_all(b"\r\n").expect("48 bytes hold it");
        let n = cursor.position() as usize;
        out.splice(head_end..head_end, tail[..n].iter().copied());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(parts: Vec<Part>, gens: &mut Generators<'_>) -> String {
        let template = RequestTemplate {
            head: vec![Part::Literal(b"GET / HTTP/1.1\r\n".as_slice().into())],
            body: parts,
            content_length: true,
        };
        let mut out = Vec::new();
        template
            .render(|_| None, None, Some(gens), &mut out)
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        text.split_once("\r\n\r\n").unwrap().1.to_string()
    }

    #[test]
    fn generators_are_parsed_by_name() {
        assert_eq!(Gen::parse("uuid"), Some(Ok(Gen::Uuid)));
        assert_eq!(Gen::parse("timestamp_ms"), Some(Ok(Gen::TimestampMs)));
        assert_eq!(Gen::parse("vu"), Some(Ok(Gen::Vu)));
        assert_eq!(Gen::parse("iteration"), Some(Ok(Gen::Iteration)));
        assert_eq!(
            Gen::parse("random_int(-5,10)"),
            Some(Ok(Gen::RandomInt(-5, 10)))
        );
        assert_eq!(Gen::parse("user"), None);
        assert_eq!(Gen::parse("random(1,2)"), None);
        for bad in [
            "random_int(3,1)",
            "random_int(1)",
            "random_int(a,b)",
            "random_int(1,2,3)",
        ] {
            let err = Gen::parse(bad).unwrap().unwrap_err();
            assert!(
                err.contains("random_int") || err.contains("bound"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn uuids_are_version_4_and_distinct() {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut gens = Generators {
            rng: &mut rng,
            vu: 1,
            iteration: 0,
        };
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let uuid = render(vec![Part::Gen(Gen::Uuid)], &mut gens);
            let groups: Vec<&str> = uuid.split('-').collect();
            let lengths: Vec<usize> = groups.iter().map(|g| g.len()).collect();
            assert_eq!(lengths, [8, 4, 4, 4, 12], "{uuid}");
            assert!(
                uuid.bytes()
                    .all(|b| b == b'-' || b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            );
            assert!(groups[2].starts_with('4'), "{uuid}");
            assert!(
                matches!(groups[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b'),
                "{uuid}"
            );
            assert!(seen.insert(uuid));
        }
        // The bits come from the random number as they are, but the version and variant.
        let mut out = Vec::new();
        write_uuid(u128::MAX, &mut out);
        assert_eq!(out, b"ffffffff-ffff-4fff-bfff-ffffffffffff");
        out.clear();
        write_uuid(0, &mut out);
        assert_eq!(out, b"00000000-0000-4000-8000-000000000000");
    }

    #[test]
    fn random_ints_stay_within_their_bounds_and_reach_both() {
        let mut rng = fastrand::Rng::with_seed(1);
        let mut gens = Generators {
            rng: &mut rng,
            vu: 1,
            iteration: 0,
        };
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            let n: i64 = render(vec![Part::Gen(Gen::RandomInt(-2, 3))], &mut gens)
                .parse()
                .unwrap();
            assert!((-2..=3).contains(&n), "{n}");
            seen.insert(n);
        }
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), [-2, -1, 0, 1, 2, 3]);
    }

    #[test]
    fn vu_iteration_and_timestamp_are_written_with_the_content_length() {
        let mut rng = fastrand::Rng::with_seed(1);
        let mut gens = Generators {
            rng: &mut rng,
            vu: 12,
            iteration: 345,
        };
        let parts = vec![
            Part::Gen(Gen::Vu),
            Part::Literal(b"/".as_slice().into()),
            Part::Gen(Gen::Iteration),
            Part::Literal(b"/".as_slice().into()),
            Part::Gen(Gen::TimestampMs),
        ];
        let before = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis();
        let template = RequestTemplate {
            head: vec![Part::Literal(b"POST / HTTP/1.1\r\n".as_slice().into())],
            body: parts,
            content_length: true,
        };
        let mut out = Vec::new();
        template
            .render(|_| None, None, Some(&mut gens), &mut out)
            .unwrap();
        let after = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis();
        let text = String::from_utf8(out.clone()).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(
            head.ends_with(&format!("Content-Length: {}", body.len())),
            "{text}"
        );
        let fields: Vec<&str> = body.split('/').collect();
        assert_eq!(&fields[..2], ["12", "345"]);
        let ms: u128 = fields[2].parse().unwrap();
        assert!((before..=after).contains(&ms), "{ms}");
        // Without generators (the plan's placeholder request) they are empty.
        template.render(|_| None, None, None, &mut out).unwrap();
        assert!(
            out.ends_with(b"Content-Length: 2\r\n\r\n//"),
            "{:?}",
            String::from_utf8_lossy(&out)
        );
    }
}
