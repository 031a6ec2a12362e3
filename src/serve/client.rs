//! A small blocking HTTP/1.1 client for the load test and the tests: one request a
//! connection, the answer read to its end. It speaks only what `zero serve` answers with.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

/// An answer: its status and body.
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    /// The body as JSON.
    pub fn json(&self) -> Result<serde_json::Value> {
        serde_json::from_slice(&self.body)
            .with_context(|| format!("the answer is not JSON: {}", self.text()))
    }
    /// The `error` message of a refusal.
    pub fn error(&self) -> Option<String> {
        let v = self.json().ok()?;
        v.get("error")?.as_str().map(str::to_string)
    }
}

/// How long a request may take (an engine move can take a while).
const TIMEOUT: Duration = Duration::from_secs(300);

/// `method path` with a JSON body (if any).
pub fn request(addr: SocketAddr, method: &str, path: &str, json: Option<&str>) -> Result<Answer> {
    let headers: &[(&str, &str)] = match json {
        Some(_) => &[("Content-Type", "application/json")],
        None => &[],
    };
    send(addr, method, path, headers, json.unwrap_or("").as_bytes())
}

/// Any request: headers and raw body bytes, for tests that send malformed ones.
pub fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<Answer> {
    let mut stream =
        TcpStream::connect(addr).with_context(|| format!("cannot connect to {addr}"))?;
    stream.set_read_timeout(Some(TIMEOUT))?;
    stream.set_write_timeout(Some(TIMEOUT))?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    // A server that refuses early (an oversized body) may close before reading it all.
    let _ = stream.write_all(body);
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .with_context(|| format!("reading the answer to {method} {path}"))?;
    parse(&raw).with_context(|| format!("the answer to {method} {path}"))
}

fn parse(raw: &[u8]) -> Result<Answer> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| anyhow!("no end of headers in {} bytes", raw.len()))?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| anyhow!("no status line"))?;
    let (mut content_type, mut chunked) = (String::new(), false);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        match name.trim().to_ascii_lowercase().as_str() {
            "content-type" => content_type = value.trim().to_string(),
            "transfer-encoding" => chunked = value.trim().eq_ignore_ascii_case("chunked"),
            _ => {}
        }
    }
    let rest = &raw[split + 4..];
    let body = if chunked {
        dechunk(rest)?
    } else {
        rest.to_vec()
    };
    Ok(Answer {
        status,
        content_type,
        body,
    })
}

/// Joins the chunks of a chunked body.
fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let end = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or_else(|| anyhow!("a chunk without a size line"))?;
        let size_text = String::from_utf8_lossy(&rest[..end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| anyhow!("a chunk size '{size_text}'"))?;
        rest = &rest[end + 2..];
        if size == 0 {
            return Ok(body);
        }
        if rest.len() < size + 2 {
            bail!("a chunk cut short");
        }
        body.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_chunked_answers_parse() {
        let a = parse(
            b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\n\r\n{\"error\":\"x\"}",
        )
        .unwrap();
        assert_eq!((a.status, a.error()), (404, Some("x".into())));
        let a = parse(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
            .unwrap();
        assert_eq!(a.text(), "abcde");
        assert!(parse(b"garbage").is_err());
    }
}
