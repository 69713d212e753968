//! Scrubbing secrets out of text that comes from outside: an endpoint's error answer, a
//! catalog's, a transport error. The one implementation used by every layer that quotes such
//! text (the cloud stores' errors, the catalog client).
//!
//! Two rules, applied in this order:
//! - **Known values** ([`Scrubber`]): every secret value the caller holds (a store's current
//!   credential options, a catalog's header values) is replaced by `***` wherever it occurs,
//!   also percent-encoded or percent-decoded, and so is each long word or query parameter of it
//!   (the token of `Bearer <token>`, the `sig` of a SAS).
//! - **Well-known patterns** ([`scrub_patterns`]): whatever the caller does not know (an
//!   older credential, another store's): the values of query parameters that carry
//!   signatures and tokens (`X-Amz-Signature`, `X-Amz-Security-Token`, `X-Amz-Credential`,
//!   `sig`, `Signature`, `X-Goog-Signature`, `access_token`...), `Authorization` and token
//!   headers quoted in text, `Bearer` tokens, and the S3 error elements that echo a signature
//!   or a string to sign.
//!
//! Which options of a store are secret is decided by the allow-list of non-secret keys (see
//! `cloud::secrets`), never by a list of secret-looking names.

use percent_encoding::{percent_decode_str, utf8_percent_encode, NON_ALPHANUMERIC};
use std::borrow::Cow;

/// What a scrubbed secret is printed as.
pub const REDACTED: &str = "***";

/// Shortest part of a secret (a word of a header value, a parameter of a SAS) that is scrubbed
/// on its own: shorter words (`Bearer`, `sv=2022`) are common text.
pub const MIN_PART_LEN: usize = 8;

/// Shortest value of a secret query parameter (`sig=...`) of a secret value that is scrubbed
/// on its own.
pub const MIN_SECRET_PARAM_LEN: usize = 4;

/// A set of secret values to replace by `***` in text (see the module docs).
#[derive(Clone, Default)]
pub struct Scrubber {
    /// Longest first, so that a whole value is replaced before its parts.
    values: Vec<String>,
}

impl std::fmt::Debug for Scrubber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Scrubber({} values)", self.values.len())
    }
}

impl Scrubber {
    /// A scrubber of `values` and their parts; a whole value is scrubbed when it has at least
    /// `min_len` characters (after trimming), a part when it has [`MIN_PART_LEN`].
    pub fn new<'a>(values: impl IntoIterator<Item = &'a str>, min_len: usize) -> Self {
        let mut out = Vec::new();
        for value in values {
            let value = value.trim();
            if value.chars().count() >= min_len {
                push_forms(&mut out, value);
            }
            // Words of the value ("Bearer <token>"), and the secret parameters of a query
            // ("sv=..&se=..&sig=..": only `sig`; the version and expiry are no secret).
            for word in value.split(char::is_whitespace) {
                if !word.contains('&') && word.chars().count() >= MIN_PART_LEN {
                    push_forms(&mut out, word);
                }
                for (name, v) in word.split('&').filter_map(|p| p.split_once('=')) {
                    if SECRET_PARAMS.iter().any(|s| s.eq_ignore_ascii_case(name))
                        && v.chars().count() >= MIN_SECRET_PARAM_LEN
                    {
                        push_forms(&mut out, v);
                    }
                }
            }
        }
        out.sort_by_key(|s| std::cmp::Reverse(s.len()));
        out.dedup();
        Self { values: out }
    }

    /// This scrubber with `other`'s values too.
    pub fn merged(mut self, other: Scrubber) -> Self {
        self.values.extend(other.values);
        self.values.sort_by_key(|s| std::cmp::Reverse(s.len()));
        self.values.dedup();
        self
    }

    /// Whether there is nothing to scrub.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with every known value replaced by `***` (no pattern rule).
    pub fn scrub_values<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        for v in &self.values {
            if out.contains(v.as_str()) {
                out = Cow::Owned(out.replace(v.as_str(), REDACTED));
            }
        }
        out
    }

    /// `text` with every known value and every well-known pattern scrubbed.
    pub fn scrub(&self, text: &str) -> String {
        scrub_patterns(&self.scrub_values(text)).into_owned()
    }
}

/// `value`, its percent-encoded form and its percent-decoded form, into `out`.
fn push_forms(out: &mut Vec<String>, value: &str) {
    out.push(value.to_string());
    let encoded = utf8_percent_encode(value, NON_ALPHANUMERIC).to_string();
    if encoded != value {
        out.push(encoded);
    }
    if let Ok(decoded) = percent_decode_str(value).decode_utf8() {
        if decoded != value && decoded.chars().count() >= MIN_PART_LEN {
            out.push(decoded.into_owned());
        }
    }
}

/// Query parameters (and `name=value` pairs in text) whose value is a secret, compared
/// case-insensitively.
pub const SECRET_PARAMS: &[&str] = &[
    "x-amz-signature",
    "x-amz-security-token",
    "x-amz-credential",
    "signature",
    "awsaccesskeyid",
    "sig",
    "x-goog-signature",
    "x-goog-credential",
    "googleaccessid",
    "access_token",
    "token",
    "client_secret",
    "password",
];

/// Headers whose value is a secret when quoted as `Name: value` in text.
pub const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "x-amz-security-token",
    "x-ms-copy-source-authorization",
    "x-goog-api-key",
    "cookie",
];

/// S3 error elements that echo a signature or what was signed.
pub const SECRET_ELEMENTS: &[&str] = &[
    "SignatureProvided",
    "StringToSign",
    "StringToSignBytes",
    "CanonicalRequest",
    "CanonicalRequestBytes",
];

/// `text` with the well-known secret-bearing patterns replaced by `***`: the values of
/// [`SECRET_PARAMS`] (`name=value` after a start, space, `?`, `&`, `;`, `,` or quote), the rest
/// of a line quoting a [`SECRET_HEADERS`] header (`Name: value`), the token after `Bearer `,
/// and the content of [`SECRET_ELEMENTS`].
pub fn scrub_patterns(text: &str) -> Cow<'_, str> {
    let mut out = text.to_string();
    for name in SECRET_ELEMENTS {
        out = scrub_element(&out, name);
    }
    for name in SECRET_HEADERS {
        out = scrub_after(&out, &format!("{name}:"), is_header_end);
    }
    out = scrub_after(&out, "bearer ", is_value_end);
    for name in SECRET_PARAMS {
        out = scrub_after(&out, &format!("{name}="), is_value_end);
    }
    if out == text {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(out)
    }
}

fn is_value_end(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '&' | '"' | '\'' | '<' | '>' | ',' | ';' | ')' | ']' | '}'
        )
}

fn is_header_end(c: char) -> bool {
    matches!(c, '\r' | '\n' | '"' | '\'' | '<' | '>' | '}')
}

/// Replaces the value after each occurrence of `marker` (ASCII, lower case; matched
/// case-insensitively at the start of `text` or after a non-alphanumeric character other than
/// `-` and `_`) up to the first character `end` accepts.
fn scrub_after(text: &str, marker: &str, end: fn(char) -> bool) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut from = 0;
    while let Some(found) = lower[from..].find(marker) {
        let at = from + found;
        let starts_word = lower[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        let value_start = at + marker.len();
        from = value_start;
        if !starts_word {
            continue;
        }
        let rest = &text[value_start..];
        let skip = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        let value_start = value_start + skip;
        let value_len = text[value_start..]
            .find(end)
            .unwrap_or(text.len() - value_start);
        if value_len == 0 || text[value_start..value_start + value_len] == *REDACTED {
            continue;
        }
        out.push_str(&text[copied..value_start]);
        out.push_str(REDACTED);
        copied = value_start + value_len;
        from = copied;
    }
    out.push_str(&text[copied..]);
    out
}

/// Replaces the content of every `<name>...</name>` element.
fn scrub_element(text: &str, name: &str) -> String {
    let (open, close) = (format!("<{name}>"), format!("</{name}>"));
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(&open) {
        let content = start + open.len();
        out.push_str(&rest[..content]);
        out.push_str(REDACTED);
        match rest[content..].find(&close) {
            Some(end) => rest = &rest[content + end..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests;
