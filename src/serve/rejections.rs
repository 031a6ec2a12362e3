//! axum's rejections of a request it could not read (a body that is not the JSON a route
//! takes, a query string with a wrong field) put in plain words naming the field: serde's
//! `invalid type: string "x", expected u32` becomes `sims: expected a whole number from 0 to
//! 4294967295, got the string "x"`, and `expected struct NewGame with 8 elements` becomes a
//! request for a JSON object. Text it does not recognise is kept as it is.

/// What axum says before serde's message, and what the message is about.
const PREFIXES: [(&str, Reading); 3] = [
    (
        "Failed to deserialize the JSON body into the target type: ",
        Reading::Body,
    ),
    (
        "Failed to parse the request body as JSON: ",
        Reading::Syntax,
    ),
    ("Failed to deserialize query string: ", Reading::Query),
];

/// What a body that is not an object (a list, a string) is told.
const OBJECT_BODY: &str = "the request body must be a JSON object of named fields";

#[derive(Clone, Copy, PartialEq)]
enum Reading {
    Body,
    Syntax,
    Query,
}

/// The rejection `text` in plain words.
pub fn plain_words(text: &str) -> String {
    if text.contains("Content-Type: application/json") {
        return "send the body as JSON, with the header Content-Type: application/json".into();
    }
    let Some((reading, rest)) = PREFIXES
        .iter()
        .find_map(|(prefix, reading)| text.strip_prefix(prefix).map(|rest| (*reading, rest)))
    else {
        return text.to_string();
    };
    let rest = without_location(rest);
    let (field, problem) = split_field(rest);
    if reading == Reading::Syntax {
        let at = field.map(|f| format!(" in {f}")).unwrap_or_default();
        return format!(
            "the request body is not JSON{at}: {}",
            syntax_words(problem)
        );
    }
    let list_body = field.is_some_and(|f| f.starts_with('['))
        || problem.starts_with("invalid length")
        || (field.is_none() && problem.contains("expected struct"));
    if reading == Reading::Body && list_body {
        return OBJECT_BODY.into();
    }
    if let Some(words) = field_list_words(problem) {
        return words;
    }
    let words = serde_words(problem);
    match field {
        Some(f) => format!("{f}: {words}"),
        None if reading == Reading::Query => format!("the query: {words}"),
        None => format!("the request body: {words}"),
    }
}

/// `text` less serde's ` at line 1 column 9`.
fn without_location(text: &str) -> &str {
    match text.rfind(" at line ") {
        Some(i) if text[i..].contains(" column ") => &text[..i],
        _ => text,
    }
}

/// The field's path (`sims`, `[0]`, `a.b`) before serde's message, if there is one.
fn split_field(text: &str) -> (Option<&str>, &str) {
    match text.split_once(": ") {
        Some((path, rest))
            if !path.is_empty()
                && !path.contains(' ')
                && !path.contains('`')
                && (path.starts_with('[') || !path.contains(':')) =>
        {
            (Some(path), rest)
        }
        _ => (None, text),
    }
}

/// An unknown or missing field, which serde names itself.
fn field_list_words(problem: &str) -> Option<String> {
    if let Some(rest) = problem.strip_prefix("unknown field ") {
        let (name, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
        let fields = expected.strip_prefix("one of ").unwrap_or(expected);
        return Some(format!(
            "unknown field {} (the fields are {})",
            quoted(name),
            unquoted(fields)
        ));
    }
    problem
        .strip_prefix("missing field ")
        .map(|name| format!("the field {} is missing", quoted(name)))
}

/// serde's `invalid type: A, expected B` and its kin as `expected B, got A`.
fn serde_words(problem: &str) -> String {
    for head in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = problem.strip_prefix(head) {
            if let Some((got, expected)) = rest.split_once(", expected ") {
                return format!("expected {}, got {}", kind_words(expected), got_words(got));
            }
        }
    }
    if let Some(rest) = problem.strip_prefix("unknown variant ") {
        let (name, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
        let choices = expected.strip_prefix("one of ").unwrap_or(expected);
        return format!("{} is not one of {}", quoted(name), unquoted(choices));
    }
    unquoted(problem)
}

/// What serde expected, for a person.
fn kind_words(expected: &str) -> String {
    match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" => {
            let max = match expected {
                "u8" => u8::MAX as u64,
                "u16" => u16::MAX as u64,
                "u32" => u32::MAX as u64,
                _ => u64::MAX,
            };
            format!("a whole number from 0 to {max}")
        }
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".into(),
        "f32" | "f64" => "a number".into(),
        "a boolean" => "true or false".into(),
        e if e.starts_with("struct ") || e == "a map" => "an object of named fields".into(),
        e if e.starts_with("a sequence") => "a list".into(),
        e => unquoted(e),
    }
}

/// What serde got instead, for a person.
fn got_words(got: &str) -> String {
    if let Some(s) = got.strip_prefix("string ") {
        return format!("the string {s}");
    }
    for head in ["integer ", "floating point ", "boolean "] {
        if let Some(v) = got.strip_prefix(head) {
            return unquoted(v);
        }
    }
    match got {
        "sequence" => "a list".into(),
        "map" => "an object".into(),
        "unit value" | "null" => "null".into(),
        g => unquoted(g),
    }
}

/// serde_json's syntax errors, which are plain already but for a few.
fn syntax_words(problem: &str) -> String {
    match problem {
        p if p.starts_with("EOF while parsing") => "it ends too soon".into(),
        "expected value" => "a value is missing or is not JSON".into(),
        p => unquoted(p),
    }
}

/// `` `a` `` as `'a'`.
fn quoted(name: &str) -> String {
    format!("'{}'", name.trim_matches('`'))
}

/// serde's backquotes dropped: `` `a`, `b` `` as `a, b`.
fn unquoted(text: &str) -> String {
    text.replace('`', "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axums_rejections_are_put_in_plain_words_naming_the_field() {
        let body = "Failed to deserialize the JSON body into the target type: ";
        let cases = [
            (
                format!("{body}sims: invalid type: string \"x\", expected u32 at line 1 column 11"),
                "sims: expected a whole number from 0 to 4294967295, got the string \"x\"",
            ),
            (
                format!(
                    "{body}sims: invalid value: integer `-1`, expected u32 at line 1 column 10"
                ),
                "sims: expected a whole number from 0 to 4294967295, got -1",
            ),
            (
                format!(
                    "{body}game: unknown variant `chess`, expected one of `connect4`, \
                     `tictactoe`, `othello4` at line 1 column 15"
                ),
                "game: 'chess' is not one of connect4, tictactoe, othello4",
            ),
            (
                format!(
                    "{body}colour: unknown field `colour`, expected one of `game`, `first` at \
                     line 1 column 9"
                ),
                "unknown field 'colour' (the fields are game, first)",
            ),
            (
                format!("{body}missing field `move` at line 1 column 2"),
                "the field 'move' is missing",
            ),
            (
                format!("{body}invalid type: sequence, expected struct NewGame with 8 elements"),
                OBJECT_BODY,
            ),
            (
                format!("{body}invalid length 0, expected struct NewGame with 8 elements"),
                OBJECT_BODY,
            ),
            (
                format!("{body}[0]: invalid type: integer `1`, expected the name of a board game"),
                OBJECT_BODY,
            ),
            (
                format!("{body}invalid type: string \"x\", expected struct MoveRequest"),
                OBJECT_BODY,
            ),
            (
                "Failed to parse the request body as JSON: first: EOF while parsing a value at \
                 line 1 column 9"
                    .to_string(),
                "the request body is not JSON in first: it ends too soon",
            ),
            (
                "Failed to deserialize query string: seconds: invalid digit found in string"
                    .to_string(),
                "seconds: invalid digit found in string",
            ),
            (
                "Expected request with `Content-Type: application/json`".to_string(),
                "send the body as JSON, with the header Content-Type: application/json",
            ),
            ("Something else".to_string(), "Something else"),
        ];
        for (text, words) in cases {
            assert_eq!(plain_words(&text), words, "{text}");
        }
    }
}
