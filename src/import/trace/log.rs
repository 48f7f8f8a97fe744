//! The TORCH_TRACE line format: a glog prefix (`V1122 13:51:13.945000 487 torch/_dynamo/utils.py:2126] `),
//! a one-line JSON envelope, then optionally a payload whose every line starts with a TAB.
//!
//! Reading is bounded: a line, a payload and the whole (decompressed) log each have a limit, so a
//! hostile or runaway file costs at most that much memory. Whatever breaks a limit, is cut short
//! or cannot be read as an envelope becomes a warning and reading goes on.

use std::io::{BufRead, ErrorKind};

use serde_json::{Map, Value as Json};

/// Limits of one read; [`Limits::default`] suits real logs (the samples are ~2 MB).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// One line, envelope or payload (the dynamo `sizes` map makes envelopes of tens of KB; the
    /// `compilation_metrics` of a T5 training compile with 2,000 guards is a 5.9 MB line).
    pub max_line: usize,
    /// One envelope's payload (an inductor output code file, a graph dump).
    pub max_payload: usize,
    /// The whole log after decompression; the rest is skipped with a warning.
    pub max_total: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_line: 32 << 20, max_payload: 64 << 20, max_total: 1 << 30 }
    }
}

/// One envelope with its payload, as read.
#[derive(Debug)]
pub struct Envelope {
    /// 1-based line number of the envelope in the (decompressed) log.
    pub line: usize,
    /// The envelope kind: its first key that is not metadata (`dynamo_output_graph`, `artifact`).
    pub kind: String,
    /// The value under that key.
    pub body: Json,
    /// All keys, metadata included (`frame_id`, `attempt`, `has_payload`, ...).
    pub fields: Map<String, Json>,
    /// Payload lines joined with `\n`, the leading TAB removed; `None` when there was none.
    pub payload: Option<String>,
}

/// Keys of an envelope that say where it belongs rather than what it is.
const META_KEYS: &[&str] = &["frame_id", "frame_compile_id", "attempt", "compiled_autograd_id", "has_payload", "rank"];

/// The result of reading a whole log.
#[derive(Debug, Default)]
pub struct ReadLog {
    pub envelopes: Vec<Envelope>,
    pub warnings: Vec<String>,
    /// The first line that was neither an envelope nor a payload line: `(line number, excerpt)`.
    pub first_bad_line: Option<(usize, String)>,
    /// Lines seen, for messages.
    pub lines: usize,
}

/// Reads envelopes from `reader` until it ends, an I/O error cuts it (a truncated gzip stream:
/// a warning), or `limits.max_total` bytes were read (a warning).
pub fn read_log(file: &str, mut reader: impl BufRead, limits: Limits) -> ReadLog {
    let mut out = ReadLog::default();
    let mut total: u64 = 0;
    let mut buf = Vec::new();
    let mut current: Option<Envelope> = None;
    let mut payload_len = 0usize;
    let mut payload_dropped = false;
    let mut orphan_payload_lines = 0usize;
    let mut garbage_lines = 0usize;
    loop {
        buf.clear();
        let (n, complete) = match read_line_bounded(&mut reader, &mut buf, limits.max_line) {
            Ok(r) => r,
            Err(e) => {
                let what = if e.kind() == ErrorKind::UnexpectedEof || e.kind() == ErrorKind::InvalidInput {
                    "the compressed stream ends early (truncated file?)"
                } else {
                    "read error"
                };
                out.warnings.push(format!("{file}: after line {}: {what}: {e}; the rest is not read", out.lines));
                break;
            }
        };
        if n == 0 {
            break;
        }
        total += n as u64;
        out.lines += 1;
        let lineno = out.lines;
        if total > limits.max_total {
            out.warnings.push(format!(
                "{file}: line {lineno}: the log is over {} bytes; the rest is not read",
                limits.max_total
            ));
            break;
        }
        if !complete {
            out.warnings.push(format!("{file}: line {lineno}: over {} bytes; skipped", limits.max_line));
            if buf.first() == Some(&b'\t') {
                payload_dropped = true;
            }
            continue;
        }
        while matches!(buf.last(), Some(b'\n' | b'\r')) {
            buf.pop();
        }
        if let Some(rest) = buf.strip_prefix(b"\t") {
            match current.as_mut() {
                Some(env) if !payload_dropped => {
                    payload_len += rest.len() + 1;
                    if payload_len > limits.max_payload {
                        out.warnings.push(format!(
                            "{file}: line {}: payload of `{}` is over {} bytes; dropped",
                            env.line, env.kind, limits.max_payload
                        ));
                        env.payload = None;
                        payload_dropped = true;
                        continue;
                    }
                    let p = env.payload.get_or_insert_with(String::new);
                    if !p.is_empty() {
                        p.push('\n');
                    }
                    p.push_str(&String::from_utf8_lossy(rest));
                }
                Some(_) => {}
                None => orphan_payload_lines += 1,
            }
            continue;
        }
        if let Some(env) = current.take() {
            out.envelopes.push(env);
        }
        payload_len = 0;
        payload_dropped = false;
        let text = String::from_utf8_lossy(&buf);
        match parse_envelope(&text) {
            Ok((kind, body, fields)) => {
                current = Some(Envelope { line: lineno, kind, body, fields, payload: None });
            }
            Err(why) => {
                if text.trim().is_empty() {
                    continue;
                }
                garbage_lines += 1;
                if out.first_bad_line.is_none() {
                    out.first_bad_line = Some((lineno, format!("{}: {why}", excerpt(&text))));
                }
                if garbage_lines <= 5 {
                    out.warnings.push(format!("{file}: line {lineno}: {why}; skipped"));
                }
            }
        }
    }
    if let Some(env) = current.take() {
        out.envelopes.push(env);
    }
    if garbage_lines > 5 {
        out.warnings.push(format!("{file}: {} more unreadable lines skipped", garbage_lines - 5));
    }
    if orphan_payload_lines > 0 {
        out.warnings.push(format!(
            "{file}: {orphan_payload_lines} payload line(s) before any envelope (log cut at its start?); skipped"
        ));
    }
    out
}

/// Reads one line into `buf`, at most `max` bytes of it: returns the bytes consumed and whether
/// the line fit (the rest of an over-long line is consumed and dropped).
fn read_line_bounded(reader: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> std::io::Result<(usize, bool)> {
    let mut consumed = 0usize;
    let mut fits = true;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok((consumed, fits));
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if fits {
            if buf.len() + take > max {
                fits = false;
                buf.clear();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        reader.consume(take);
        consumed += take;
        if done {
            return Ok((consumed, fits));
        }
    }
}

/// Splits `V1122 13:51:13.945000 487 path.py:12] {json}` into the envelope's kind, body and keys.
fn parse_envelope(line: &str) -> Result<(String, Json, Map<String, Json>), String> {
    let json = strip_glog_prefix(line).ok_or("expected a glog prefix such as `V1122 13:51:13.945000 487 file.py:12] `")?;
    let value: Json = serde_json::from_str(json).map_err(|e| format!("envelope is not valid JSON ({e})"))?;
    let Json::Object(fields) = value else {
        return Err("envelope is not a JSON object".into());
    };
    let kind = fields
        .keys()
        .find(|k| !META_KEYS.contains(&k.as_str()))
        .ok_or("envelope has no kind key")?
        .clone();
    let body = fields.get(&kind).cloned().unwrap_or(Json::Null);
    Ok((kind, body, fields))
}

/// The JSON after a glog prefix: a level letter, `MMDD`, a time, a thread id, `file:line] `.
fn strip_glog_prefix(line: &str) -> Option<&str> {
    let mut chars = line.chars();
    if !matches!(chars.next()?, 'V' | 'I' | 'W' | 'E' | 'C' | 'F') {
        return None;
    }
    let date = line.get(1..5)?;
    if !date.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let close = line.find("] ")?;
    let rest = line[close + 2..].trim_start();
    rest.starts_with('{').then_some(rest)
}

fn excerpt(text: &str) -> String {
    let mut end = text.len().min(120);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if end < text.len() {
        format!("`{}…`", &text[..end])
    } else {
        format!("`{text}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, limits: Limits) -> ReadLog {
        read_log("t.log", text.as_bytes(), limits)
    }

    #[test]
    fn envelopes_carry_their_payload_lines() {
        let log = "V1122 13:54:39.887000 468 a.py:1] {\"dynamo_start\": {}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0}\n\
                   V1122 13:54:39.887000 468 a.py:2] {\"aot_inference_graph\": {}, \"frame_id\": 0, \"has_payload\": \"x\"}\n\
                   \tclass A:\n\t    pass\n";
        let r = read(log, Limits::default());
        assert_eq!(r.envelopes.len(), 2);
        assert_eq!(r.envelopes[0].kind, "dynamo_start");
        assert_eq!(r.envelopes[1].kind, "aot_inference_graph");
        assert_eq!(r.envelopes[1].payload.as_deref(), Some("class A:\n    pass"));
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }

    #[test]
    fn garbage_long_lines_and_big_payloads_become_warnings() {
        let long = "x".repeat(100);
        let log = format!(
            "garbage here\nV1122 00:00:00.0 1 a.py:1] {{\"str\": [\"a\", 0]}}\n{long}\n\
             V1122 00:00:00.0 1 a.py:1] {{\"artifact\": {{}}}}\n\t{long}\n\t{long}\nV1122 00:00:00.0 1 a.py:1] {{broken\n"
        );
        let r = read(&log, Limits { max_line: 150, max_payload: 150, max_total: 1 << 20 });
        assert_eq!(r.envelopes.len(), 2);
        assert_eq!(r.envelopes[1].payload, None);
        assert_eq!(r.first_bad_line.as_ref().map(|b| b.0), Some(1));
        assert!(r.warnings.iter().any(|w| w.contains("payload")), "{:?}", r.warnings);
        assert!(r.warnings.iter().any(|w| w.contains("not valid JSON")), "{:?}", r.warnings);
        let r = read(&log, Limits { max_line: 50, max_payload: 1000, max_total: 1 << 20 });
        assert!(r.warnings.iter().any(|w| w.contains("over 50 bytes")), "{:?}", r.warnings);
        let r = read(&log, Limits { max_line: 1000, max_payload: 1000, max_total: 40 });
        assert!(r.warnings.iter().any(|w| w.contains("the rest is not read")), "{:?}", r.warnings);
    }
}
