//! The page's files, compiled into the binary: no build step, nothing fetched from the
//! internet (no CDN, no web font), so the page works offline.

pub struct Asset {
    pub content_type: &'static str,
    pub body: &'static str,
}

/// Only this server's own files and inline images: the page loads nothing from elsewhere.
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; \
     connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const FILES: [(&str, &str, &str); 5] = [
    (
        "index.html",
        "text/html; charset=utf-8",
        include_str!("web/index.html"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("web/style.css"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("web/app.js"),
    ),
    (
        "panels.js",
        "text/javascript; charset=utf-8",
        include_str!("web/panels.js"),
    ),
    (
        "favicon.svg",
        "image/svg+xml",
        include_str!("web/favicon.svg"),
    ),
];

/// The file called `name`, if the page has one.
pub fn asset(name: &str) -> Option<Asset> {
    FILES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|&(_, content_type, body)| Asset { content_type, body })
}
