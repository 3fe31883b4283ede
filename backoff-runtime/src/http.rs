//! HTTP responses as retry decisions: a server's `Retry-After` hint and the
//! status codes worth retrying.
//!
//! Available with the `http` feature, off by default:
//! `backoff-runtime = { version = "0.1", features = ["http"] }`.
//!
//! The functions here know nothing of any HTTP client: they take a status
//! code and the text of a `Retry-After` field, so they work with `reqwest`,
//! `hyper`, `ureq`, `surf` or a test double alike.
//! [`decision_from_headers`] is a shortcut for the types of the [`http`
//! crate](https://docs.rs/http/1) (1.x), which `reqwest`, `hyper` and `axum`
//! use.
//!
//! ```
//! use backoff_runtime::{retry, http, Decision};
//! use std::time::SystemTime;
//!
//! #[derive(Debug)]
//! struct HttpError {
//!     status: u16,
//!     retry_after: Option<String>,
//! }
//!
//! // `when`: 429 and 503 wait as long as the server asks, other 4xx stop.
//! fn classify(e: &HttpError) -> Decision {
//!     http::decision(e.status, e.retry_after.as_deref(), SystemTime::now())
//! }
//!
//! #[retry(exponential(base = "100ms", max = "5s"), attempts = 4, max_elapsed = "30s", when = classify)]
//! fn get(path: &str) -> Result<String, HttpError> {
//!     // ... send the request; on an error status keep the status and the
//!     // `Retry-After` header in the error ...
//! #   if path.is_empty() { return Err(HttpError { status: 404, retry_after: None }); }
//!     Ok(format!("contents of {path}"))
//! }
//!
//! assert_eq!(get("/a").unwrap(), "contents of /a");
//! assert_eq!(get("").unwrap_err().status, 404); // a 404 is not retried
//! ```
//!
//! # The status codes
//!
//! | status | decision | why |
//! |---|---|---|
//! | 429 Too Many Requests, 503 Service Unavailable | [`RetryAfter(d)`](Decision::RetryAfter) with a valid `Retry-After`, else [`Retry`](Decision::Retry) | the server is overloaded or rate-limiting and says when to come back (RFC 6585 §4, RFC 9110 §15.6.4) |
//! | 408 Request Timeout, 425 Too Early | `RetryAfter(d)` / `Retry`, likewise | the server gave up waiting for the request (RFC 9110 §15.5.9), or wants it again after the TLS handshake (RFC 8470 §5.2) |
//! | 500, 502 Bad Gateway, 504 Gateway Timeout, and any 5xx this table does not name | `RetryAfter(d)` / `Retry`, likewise | usually transient: a crash, a restart, an overloaded upstream; an unknown 5xx is treated as 500 (RFC 9110 §15) |
//! | 501 Not Implemented, 505 HTTP Version Not Supported, 506, 507 Insufficient Storage, 508 Loop Detected, 510, 511 Network Authentication Required | [`Stop`](Decision::Stop) | the server or its configuration cannot serve this request, now or in a moment |
//! | any other 4xx (400, 401, 403, 404, 409, 413, 422, …) | `Stop` | the request is wrong: sending it again gives the same answer |
//! | 1xx, 2xx, 3xx, and anything outside 100–599 | `Stop` | not an error; there is nothing to retry |
//!
//! A retried status honours a valid `Retry-After` whatever the code; a
//! missing or malformed one falls back to the policy's backoff
//! ([`Decision::Retry`]).
//!
//! Whether a request may be sent twice is yours to judge: a `POST` that got a
//! 502 or 504 may have been applied (RFC 9110 §9.2.2). A 429 or 503 usually
//! means the request was not processed.
//!
//! # What a `Retry-After` may say
//!
//! The field is read as RFC 9110 §10.2.3 defines it, and no more leniently:
//!
//! | the field's value | [`retry_after`] | [`decision`] for a retried status |
//! |---|---|---|
//! | ASCII digits, of any length: `120`, `007` | that many seconds; more than `u64::MAX` saturates at `u64::MAX` seconds | [`RetryAfter`](Decision::RetryAfter) that long |
//! | an HTTP-date in the future, in any of the three formats RFC 9110 §5.6.7 asks a recipient to accept: IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, the obsolete RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT` and asctime `Sun Nov  6 08:49:37 1994` | the time from `now` to that date | `RetryAfter` that long |
//! | an HTTP-date now or in the past | [`Duration::ZERO`] | `RetryAfter(0)`: retry at once |
//! | either form with spaces or tabs before or after it (` 5`, `5 `) | as without them | as without them |
//! | anything else: empty, a sign (`-5`, `+5`), a fraction (`1.5`), a unit (`5s`), a space inside (`5 0`), a list (`5, 10`), a date with the wrong weekday, a day that does not exist (`31 Feb`), a date before 1970, another date format (ISO 8601), a control character or line break, a character outside ASCII | `None` | [`Retry`](Decision::Retry): the policy's backoff, as if there were no `Retry-After` |
//!
//! An RFC 850 date's two-digit year is read as 2000–2069 for `00`–`69`
//! and 1970–1999 for `70`–`99`.
//!
//! [`decision_from_headers`] reads the field from a
//! [`HeaderMap`](::http::HeaderMap) and also falls back to the policy's
//! backoff when the field's bytes are not visible ASCII (obs-text, bytes
//! `0x80`–`0xFF`, which is not UTF-8 either), and when the response has the
//! field more than once, whatever the values: `Retry-After` holds one value
//! and a sender must not repeat it (RFC 9110 §5.3), so neither line is
//! trusted (ignoring the field is RFC 9110 §16.3.2.1's advice for a
//! repeated single-value field).
//!
//! Nothing here panics on any input, and reading a value takes time linear
//! in its length, whatever it holds (a 100 KB value included). A response
//! head larger than the HTTP client accepts (about 400 KB for `hyper` and
//! `reqwest`) never reaches these functions: the client returns an error
//! instead of a response, and your `when` decides about that error.
//!
//! # Bounding the wait
//!
//! These functions report what the server asked for, however long; the
//! policy decides whether to follow it. A valid hint is followed exactly,
//! beyond the strategy's maximum, but never further than the policy
//! allows: a [`Decision::RetryAfter`] longer than
//! the policy's `retry_after_max` (by default
//! five minutes) gives up at once and returns the error, without sleeping
//! ([`GiveUpReason::Deadline`](crate::GiveUpReason::Deadline)). So a
//! hostile or misconfigured server cannot stall a caller with one header,
//! even on a call without `max_elapsed`:
//!
//! | the server answers 503 with | the call, by default |
//! |---|---|
//! | `Retry-After: 300`, or a date five minutes ahead | sleeps that long, then retries |
//! | `Retry-After: 999999999`, 30 digits, a date in 2099 | gives up at once with the 503's error |
//! | `Retry-After: Sun, 06 Nov 1994 08:49:37 GMT` (past) | retries at once, within the attempt limit |
//! | `Retry-After: -5`, `+5`, `1.5`, `5 0`, twice, not UTF-8 | retries after the policy's backoff |
//!
//! Change the bound with `#[retry(retry_after_max = "1h")]` or
//! [`Policy::retry_after_max`](crate::Policy::retry_after_max). A
//! `max_elapsed` bounds the whole call as well: a wait that would end past
//! that deadline gives up at once too, so `Retry-After: 60` under
//! `max_elapsed = "10s"` returns the error without sleeping.

use core::time::Duration;
use std::time::SystemTime;

use crate::Decision;

/// Reads a `Retry-After` field value: how long to wait from `now`.
///
/// Available with the `http` feature (off by default).
///
/// Both forms of RFC 9110 §10.2.3 are accepted, and nothing else (the
/// [module docs](self#what-a-retry-after-may-say) give the table):
///
/// - delay-seconds: ASCII digits only (no sign, no fraction, no unit), of
///   any length; values too large for a `u64` saturate at `u64::MAX`
///   seconds.
/// - HTTP-date, in any of the three formats a recipient must accept
///   (IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, the obsolete RFC 850
///   and asctime formats), parsed by [`httpdate`](https://docs.rs/httpdate).
///   The wait is the time from `now` to that date, [`Duration::ZERO`] for a
///   date already past. A date whose weekday does not match, or that does
///   not exist (`31 Feb`), or before 1970, is rejected.
///
/// Spaces and tabs around the value are ignored. Anything else (empty,
/// signed, fractional, words, control characters, non-ASCII) gives `None`;
/// nothing panics.
///
/// The result is what the server asked for, however long: the policy's
/// `retry_after_max` (five minutes unless set) decides whether a call
/// follows it; see [Bounding the wait](self#bounding-the-wait).
///
/// `now` is a parameter so that tests can fix it; pass
/// [`SystemTime::now()`] when the response arrives.
///
/// # Examples
///
/// ```
/// use backoff_runtime::http::retry_after;
/// use std::time::{Duration, SystemTime, UNIX_EPOCH};
///
/// let now = SystemTime::now();
/// assert_eq!(retry_after("120", now), Some(Duration::from_secs(120)));
/// assert_eq!(retry_after(" 0 ", now), Some(Duration::ZERO));
/// // Too large for a u64: saturates (and a call gives up on it at once).
/// assert_eq!(retry_after(&"9".repeat(30), now), Some(Duration::from_secs(u64::MAX)));
///
/// // 1994-11-06 08:49:37 UTC, seven seconds before that date:
/// let then = UNIX_EPOCH + Duration::from_secs(784_111_777);
/// let before = then - Duration::from_secs(7);
/// assert_eq!(retry_after("Sun, 06 Nov 1994 08:49:37 GMT", before), Some(Duration::from_secs(7)));
/// // A date in the past: retry at once.
/// assert_eq!(retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now), Some(Duration::ZERO));
///
/// for garbage in ["", "-1", "+1", "1.5", "5 0", "5s", "soon", "٣", "Mon, 06 Nov 1994 08:49:37 GMT"] {
///     assert_eq!(retry_after(garbage, now), None, "{garbage:?}");
/// }
/// ```
pub fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim_matches([' ', '\t']);
    let bytes = value.as_bytes();
    if bytes.is_empty() {
        return None;
    }
    if bytes.iter().all(u8::is_ascii_digit) {
        // (Digits alone: only a number past `u64::MAX` fails, and
        // saturates, as RFC 9111 §1.2.2 asks of a cache.)
        return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
    }
    // An HTTP-date is visible ASCII and spaces only. Checked here because
    // the date parser would trim line breaks and other whitespace first.
    if !bytes.iter().all(|b| matches!(b, b' '..=b'~')) {
        return None;
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// What to do after a response with this status: the `when` verdict for an
/// HTTP error.
///
/// Available with the `http` feature (off by default).
///
/// `retry_after` is the text of the response's `Retry-After` field, if it
/// had one. For a retried status (429, 503, 408, 425, and 5xx but 501, 505,
/// 506, 507, 508, 510, 511) a valid hint gives
/// [`Decision::RetryAfter`], a missing or malformed one
/// [`Decision::Retry`] (the policy's backoff). Every other status, success
/// and redirects included, gives [`Decision::Stop`]. The
/// [module docs](self#the-status-codes) give the table and the reasons.
///
/// The wait is exact and not capped by the strategy's maximum; the
/// policy's `retry_after_max` (five minutes unless set) and `max_elapsed`
/// bound it: a longer wait gives up at once instead of sleeping (see
/// [Bounding the wait](self#bounding-the-wait)).
///
/// # Examples
///
/// ```
/// use backoff_runtime::{http::decision, Decision};
/// use std::time::{Duration, SystemTime};
///
/// let now = SystemTime::now();
/// assert_eq!(decision(503, Some("2"), now), Decision::RetryAfter(Duration::from_secs(2)));
/// assert_eq!(decision(429, None, now), Decision::Retry);
/// assert_eq!(decision(429, Some("soon"), now), Decision::Retry); // malformed: back off
/// assert_eq!(decision(502, None, now), Decision::Retry);
/// assert_eq!(decision(404, Some("2"), now), Decision::Stop);
/// assert_eq!(decision(501, None, now), Decision::Stop);
/// assert_eq!(decision(200, None, now), Decision::Stop);
/// ```
pub fn decision(status: u16, retry_after: Option<&str>, now: SystemTime) -> Decision {
    // (Whether a response with this status is worth sending again: the
    // module docs' table.)
    let retryable = matches!(status, 408 | 425 | 429 | 500..=599)
        && !matches!(status, 501 | 505 | 506 | 507 | 508 | 510 | 511);
    if !retryable {
        return Decision::Stop;
    }
    match retry_after.and_then(|v| self::retry_after(v, now)) {
        Some(wait) => Decision::RetryAfter(wait),
        None => Decision::Retry,
    }
}

/// [`decision`] for the types of the [`http`](https://docs.rs/http/1) crate
/// (1.x), which `reqwest`, `hyper` and `axum` use:
/// `decision_from_headers(response.status(), response.headers(), SystemTime::now())`.
///
/// Available with the `http` feature (off by default), which brings in the
/// `http` crate.
///
/// The hint is the `Retry-After` field when the response has exactly one
/// and its value is visible ASCII (spaces and tabs included). The field
/// holds one value and may not be repeated (RFC 9110 §5.3), so a response
/// with several is taken as malformed, whatever their values, and so is a
/// value with other bytes (obs-text `0x80`–`0xFF`, not UTF-8): the
/// policy's backoff applies ([`Decision::Retry`]). The
/// [module docs](self#what-a-retry-after-may-say) list what the value may
/// say.
///
/// # Examples
///
/// ```
/// use backoff_runtime::{http::decision_from_headers, Decision};
/// use http::{header::RETRY_AFTER, HeaderMap, HeaderValue, StatusCode};
/// use std::time::{Duration, SystemTime};
///
/// let now = SystemTime::now();
/// let mut headers = HeaderMap::new();
/// assert_eq!(decision_from_headers(StatusCode::TOO_MANY_REQUESTS, &headers, now), Decision::Retry);
///
/// headers.insert(RETRY_AFTER, HeaderValue::from_static("30"));
/// assert_eq!(
///     decision_from_headers(StatusCode::SERVICE_UNAVAILABLE, &headers, now),
///     Decision::RetryAfter(Duration::from_secs(30)),
/// );
/// assert_eq!(decision_from_headers(StatusCode::FORBIDDEN, &headers, now), Decision::Stop);
///
/// headers.append(RETRY_AFTER, HeaderValue::from_static("1"));
/// assert_eq!(decision_from_headers(StatusCode::SERVICE_UNAVAILABLE, &headers, now), Decision::Retry);
/// ```
pub fn decision_from_headers(
    status: ::http::StatusCode,
    headers: &::http::HeaderMap,
    now: SystemTime,
) -> Decision {
    let mut values = headers.get_all(::http::header::RETRY_AFTER).iter();
    let hint = match (values.next(), values.next()) {
        (Some(only), None) => only.to_str().ok(),
        _ => None,
    };
    decision(status.as_u16(), hint, now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    const SECS: fn(u64) -> Duration = Duration::from_secs;

    /// 1994-11-06 08:49:37 UTC, the date of RFC 9110's examples.
    fn rfc_date() -> SystemTime {
        UNIX_EPOCH + SECS(784_111_777)
    }

    #[test]
    fn delay_seconds_form() {
        let now = SystemTime::now();
        assert_eq!(retry_after("0", now), Some(Duration::ZERO));
        assert_eq!(retry_after("1", now), Some(SECS(1)));
        assert_eq!(retry_after("120", now), Some(SECS(120)));
        assert_eq!(retry_after("007", now), Some(SECS(7)));
        assert_eq!(retry_after("3600", now), Some(SECS(3600)));
        assert_eq!(retry_after(" \t42\t ", now), Some(SECS(42)));
    }

    #[test]
    fn delay_seconds_saturate() {
        let now = SystemTime::now();
        let max = Some(SECS(u64::MAX));
        assert_eq!(
            retry_after("18446744073709551615", now),
            max,
            "u64::MAX itself"
        );
        assert_eq!(retry_after("18446744073709551616", now), max);
        assert_eq!(retry_after("99999999999999999999999", now), max);
        assert_eq!(retry_after(&"9".repeat(10_000), now), max);
        assert_eq!(
            retry_after("18446744073709551614", now),
            Some(SECS(u64::MAX - 1))
        );
    }

    #[test]
    fn http_dates_in_all_three_formats() {
        let before = rfc_date() - SECS(90);
        for form in [
            "Sun, 06 Nov 1994 08:49:37 GMT",  // IMF-fixdate
            "Sunday, 06-Nov-94 08:49:37 GMT", // RFC 850
            "Sun Nov  6 08:49:37 1994",       // asctime
        ] {
            assert_eq!(retry_after(form, before), Some(SECS(90)), "{form}");
            assert_eq!(retry_after(&format!("  {form} "), before), Some(SECS(90)));
        }
    }

    #[test]
    fn http_dates_are_measured_from_now() {
        let now = SystemTime::now();
        let in_a_minute = httpdate::fmt_http_date(now + SECS(60));
        let wait = retry_after(&in_a_minute, now).unwrap();
        // The date has whole seconds: up to one second is lost.
        assert!(wait > SECS(59) && wait <= SECS(60), "{wait:?}");
        // Sub-second precision of `now` is kept.
        let at = rfc_date() - Duration::from_millis(1500);
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:49:37 GMT", at),
            Some(Duration::from_millis(1500))
        );
    }

    #[test]
    fn past_dates_mean_now() {
        let now = SystemTime::now();
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            retry_after("Thu, 01 Jan 1970 00:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:49:37 GMT", rfc_date()),
            Some(Duration::ZERO),
            "exactly now"
        );
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:49:36 GMT", rfc_date()),
            Some(Duration::ZERO),
            "one second ago"
        );
    }

    #[test]
    fn far_future_dates() {
        let wait = retry_after("Fri, 31 Dec 9999 23:59:59 GMT", UNIX_EPOCH).unwrap();
        assert_eq!(wait, SECS(253_402_300_799));
    }

    #[test]
    fn two_digit_years_of_rfc_850_dates() {
        // 00-69 are 2000-2069, 70-99 are 1970-1999.
        assert_eq!(
            retry_after("Tuesday, 31-Dec-69 23:59:59 GMT", UNIX_EPOCH),
            Some(SECS(3_155_759_999))
        );
        assert_eq!(
            retry_after("Thursday, 01-Jan-70 00:00:01 GMT", UNIX_EPOCH),
            Some(SECS(1))
        );
        // 1999, not 2099: in the past.
        assert_eq!(
            retry_after("Friday, 31-Dec-99 23:59:59 GMT", SystemTime::now()),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn dates_in_2099() {
        let end_of_2099 = SECS(4_102_444_799);
        for form in ["Thu, 31 Dec 2099 23:59:59 GMT", "Thu Dec 31 23:59:59 2099"] {
            assert_eq!(retry_after(form, UNIX_EPOCH), Some(end_of_2099), "{form}");
        }
    }

    /// Regression: the date parser trims line breaks and other whitespace
    /// itself, so a date wrapped in them was accepted although the docs
    /// (and the digits form) allow only spaces and tabs.
    #[test]
    fn only_spaces_and_tabs_surround_a_date() {
        let before = rfc_date() - SECS(3);
        for wrapped in [
            "\nSun, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT\r\n",
            "\u{b}Sun, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT\u{c}",
            "\rSun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(retry_after(wrapped, before), None, "{wrapped:?}");
        }
        assert_eq!(
            retry_after("\t Sun, 06 Nov 1994 08:49:37 GMT \t", before),
            Some(SECS(3))
        );
    }

    #[test]
    fn long_values() {
        let now = SystemTime::now();
        let big = 100 * 1024;
        assert_eq!(retry_after(&"9".repeat(big), now), Some(SECS(u64::MAX)));
        let padded = format!("{}5", "0".repeat(big));
        assert_eq!(retry_after(&padded, now), Some(SECS(5)));
        let spaced = format!("{0}7{0}", " ".repeat(big));
        assert_eq!(retry_after(&spaced, now), Some(SECS(7)));
        assert_eq!(retry_after(&"x".repeat(big), now), None);
        assert_eq!(retry_after(&format!("{}x", "9".repeat(big)), now), None);
    }

    #[test]
    fn garbage_is_rejected() {
        let now = SystemTime::now();
        for garbage in [
            "",
            " ",
            "\t",
            "-1",
            "+1",
            "-0",
            "1.5",
            "1e3",
            "0x10",
            "5s",
            "5 s",
            "1 2",
            "1,2",
            "5, 10",
            "5,5",
            "5 0",
            "soon",
            "never",
            "١٢٣",  // Arabic-Indic digits
            "１２", // fullwidth digits
            "12\u{a0}",
            "🕐",
            "Sun, 06 Nov 1994 08:49:37 GMT\u{e9}",
            "\0",
            "\r\n5",
            // Dates that do not exist or do not parse.
            "Mon, 06 Nov 1994 08:49:37 GMT", // wrong weekday
            "Wed, 31 Feb 2021 00:00:00 GMT", // no 31 February
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:60:00 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 06 Nov 1994 08:49:37",
            "Sun, 06 Nov 1994",
            "Wed, 31 Dec 1969 23:59:59 GMT", // before the epoch
            "1994-11-06T08:49:37Z",          // ISO 8601 is not an HTTP-date
            "Sun, 6 Nov 1994 08:49:37 GMT",
        ] {
            assert_eq!(retry_after(garbage, now), None, "{garbage:?}");
        }
    }

    #[test]
    fn no_input_panics() {
        // Every short byte pattern over an alphabet that reaches each parser's
        // branches: digits, separators, letters of day and month names.
        let alphabet = [
            "0", "9", " ", ",", ":", "-", "S", "u", "n", "G", "é", "1994",
        ];
        let now = SystemTime::now();
        for a in alphabet {
            for b in alphabet {
                for c in alphabet {
                    let _ = retry_after(&[a, b, c].concat(), now);
                }
            }
        }
        // Valid dates cut short at every byte.
        for date in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            for end in 0..date.len() {
                assert_eq!(retry_after(&date[..end], now), None, "{:?}", &date[..end]);
            }
        }
        let _ = retry_after("Sun, 06 Nov 1994 08:49:37 GMT", UNIX_EPOCH);
        let _ = retry_after("Fri, 31 Dec 9999 23:59:59 GMT", UNIX_EPOCH + SECS(1 << 40));
    }

    #[test]
    fn statuses_that_honour_the_hint() {
        let now = SystemTime::now();
        for status in [408, 425, 429, 500, 502, 503, 504, 520, 599] {
            assert_eq!(
                decision(status, Some("3"), now),
                Decision::RetryAfter(SECS(3)),
                "{status}"
            );
            assert_eq!(decision(status, None, now), Decision::Retry, "{status}");
            assert_eq!(
                decision(status, Some("soon"), now),
                Decision::Retry,
                "{status}"
            );
            assert_eq!(decision(status, Some(""), now), Decision::Retry, "{status}");
        }
    }

    #[test]
    fn rate_limits_with_dates_and_huge_values() {
        let before = rfc_date() - SECS(5);
        assert_eq!(
            decision(503, Some("Sun, 06 Nov 1994 08:49:37 GMT"), before),
            Decision::RetryAfter(SECS(5))
        );
        assert_eq!(
            decision(
                429,
                Some("Sun, 06 Nov 1994 08:49:37 GMT"),
                rfc_date() + SECS(1)
            ),
            Decision::RetryAfter(Duration::ZERO)
        );
        assert_eq!(
            decision(429, Some("99999999999999999999999"), before),
            Decision::RetryAfter(SECS(u64::MAX))
        );
    }

    #[test]
    fn statuses_that_stop() {
        let now = SystemTime::now();
        let stop = [
            0,
            1,
            99,
            100,
            101,
            199,
            200,
            201,
            204,
            299,
            300,
            301,
            302,
            304,
            307,
            308,
            399,
            400,
            401,
            402,
            403,
            404,
            405,
            406,
            407,
            409,
            410,
            411,
            412,
            413,
            414,
            415,
            416,
            417,
            418,
            421,
            422,
            423,
            424,
            426,
            428,
            431,
            451,
            499,
            501,
            505,
            506,
            507,
            508,
            510,
            511,
            600,
            999,
            1000,
            u16::MAX,
        ];
        for status in stop {
            assert_eq!(decision(status, Some("1"), now), Decision::Stop, "{status}");
            assert_eq!(decision(status, None, now), Decision::Stop, "{status}");
        }
    }

    #[test]
    fn from_header_maps() {
        use ::http::StatusCode;
        use ::http::header::{HeaderMap, HeaderValue, RETRY_AFTER};

        let now = rfc_date() - SECS(4);
        let mut headers = HeaderMap::new();
        let unavailable = StatusCode::SERVICE_UNAVAILABLE;
        assert_eq!(
            decision_from_headers(unavailable, &headers, now),
            Decision::Retry
        );
        headers.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(
            decision_from_headers(unavailable, &headers, now),
            Decision::RetryAfter(SECS(2))
        );
        assert_eq!(
            decision_from_headers(StatusCode::NOT_FOUND, &headers, now),
            Decision::Stop
        );
        assert_eq!(
            decision_from_headers(StatusCode::OK, &headers, now),
            Decision::Stop
        );
        headers.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        assert_eq!(
            decision_from_headers(StatusCode::TOO_MANY_REQUESTS, &headers, now),
            Decision::RetryAfter(SECS(4))
        );
        // Not visible ASCII: `to_str` refuses it, so it is ignored.
        headers.insert(RETRY_AFTER, HeaderValue::from_bytes(b"\xff5").unwrap());
        assert_eq!(
            decision_from_headers(unavailable, &headers, now),
            Decision::Retry
        );
        // Twice, even with the same value: malformed, ignored.
        headers.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        headers.append(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(
            decision_from_headers(unavailable, &headers, now),
            Decision::Retry
        );
    }
}
