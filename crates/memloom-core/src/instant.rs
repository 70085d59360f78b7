//! The instant rule: which ISO 8601 texts memloom takes for a recall's `asOf`, `since` and
//! `until` and a memory's `at`, and the one canonical form every door hands to SQL.
//!
//! The one copy for both front doors: the edge worker calls it natively (`api.rs`), the npm
//! store and CLI through memloom-wasm (`toInstant`), so a text one door takes the other takes
//! too, as the same instant, with the same error.
//!
//! Accepted, after trimming white space at both ends:
//! - `YYYY-MM-DD`, a date in the Gregorian calendar (2023-02-29 is refused, 2024-02-29 taken);
//! - optionally followed by `T`, `t` or a space and `HH:MM` (00:00 to 23:59; 24:00 is refused),
//!   then optionally `:SS` (00 to 59: a leap second `:60` is refused, as JavaScript's `Date`
//!   refuses it; PostgreSQL would roll it into the next minute) and `.` with one or more digits
//!   (past the third, truncated: milliseconds are the stored precision, docs/TIME.md);
//! - then optionally `Z`, `z` or an offset `±HH`, `±HH:MM` or `±HHMM` (up to 23:59). A time
//!   without one is UTC, never the machine's zone.
//!
//! A date alone is its midnight UTC, or with `end_of_day` (for `until`) the last millisecond of
//! that day, so `until: 2023-05-08` includes the 8th. The instant must fall in the years 0001
//! to 9999 once in UTC: PostgreSQL's `timestamptz` has no year 0, and JavaScript writes years
//! past 9999 as `+010000`, which it does not read.
//!
//! The canonical form is `YYYY-MM-DDTHH:MM:SS.mmmZ`, what JavaScript's `toISOString` writes.

use crate::Error;

/// What the refusal of a malformed value says the door takes: JSON doors take text only,
/// JavaScript callers may also pass a `Date`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstantForms {
    /// ISO 8601 text only (the worker's REST and MCP bodies).
    Text,
    /// A `Date` or ISO 8601 text (the npm store and CLI).
    TextOrDate,
}

/// An instant in milliseconds since 1970-01-01T00:00:00Z, checked to lie in the years 0001 to
/// 9999 (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant {
    millis: i64,
}

/// 0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z, in epoch milliseconds.
const MIN_MILLIS: i64 = -62_135_596_800_000;
const MAX_MILLIS: i64 = 253_402_300_799_999;
const DAY_MILLIS: i64 = 86_400_000;
/// How much of a refused value its error repeats.
const SHOWN_BYTES: usize = 40;

impl Instant {
    /// Milliseconds since the epoch (negative before 1970).
    pub fn millis(self) -> i64 {
        self.millis
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, the text every door passes to SQL.
    pub fn iso(self) -> String {
        let (day, rem) = (
            self.millis.div_euclid(DAY_MILLIS),
            self.millis.rem_euclid(DAY_MILLIS),
        );
        let (y, m, d) = civil_from_days(day);
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
            rem / 3_600_000,
            rem / 60_000 % 60,
            rem / 1000 % 60,
            rem % 1000
        )
    }

    /// An instant already in milliseconds (a JavaScript `Date`'s time value): `shown` is how
    /// the value reads in an error, for one that is not a number or out of range.
    pub fn from_millis(field: &str, millis: f64, shown: &str) -> Result<Instant, Error> {
        let shown = truncate(shown);
        if !millis.is_finite() {
            return Err(invalid(field, &shown, ""));
        }
        if millis < MIN_MILLIS as f64 || millis > MAX_MILLIS as f64 {
            return Err(invalid(field, &shown, OUT_OF_RANGE));
        }
        // A Date's time value is a whole number of milliseconds.
        Ok(Instant {
            millis: millis.trunc() as i64,
        })
    }
}

const OUT_OF_RANGE: &str = " (years 0001 to 9999 in UTC)";

/// A recall's time window (`since` .. `until`, each optional and inclusive): refused when it is
/// empty, since nothing could match and the caller has most likely swapped the two.
pub fn check_window(since: Option<Instant>, until: Option<Instant>) -> Result<(), Error> {
    match (since, until) {
        (Some(s), Some(u)) if s > u => Err(Error::invalid_option(format!(
            "since ({}) is after until ({}): nothing can match",
            s.iso(),
            u.iso()
        ))),
        _ => Ok(()),
    }
}

/// The refusal of a value that is not an instant's form at all (a number, an object, a text
/// that is not ISO 8601). `shown` is the value as the caller writes it (JSON for JavaScript).
pub fn not_an_instant(field: &str, shown: &str, forms: InstantForms) -> Error {
    refuse_form(field, &truncate(shown), forms)
}

fn refuse_form(field: &str, shown: &str, forms: InstantForms) -> Error {
    let what = match forms {
        InstantForms::Text => "an ISO 8601 date or time",
        InstantForms::TextOrDate => "a Date or an ISO 8601 date or time",
    };
    Error::invalid_option(format!(
        "{field} must be {what} such as 2026-03-01 or 2026-03-01T12:00Z, not {shown}"
    ))
}

/// A value in the form but not a real date or time (2023-02-30, 24:00, offset +25:00).
fn invalid(field: &str, shown: &str, why: &str) -> Error {
    Error::invalid_option(format!("{field} is not a valid date or time: {shown}{why}"))
}

fn truncate(s: &str) -> String {
    if s.len() <= SHOWN_BYTES {
        return s.to_string();
    }
    let mut end = SHOWN_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// `s` as a JSON string, as JavaScript's `JSON.stringify` writes it (npm showed values so;
/// Rust's `{:?}` differs for some characters and costs the wasm 4 KB of Unicode tables).
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c < ' ' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Parses `text` as the instant rule above; `field` names the option in the error (`asOf`,
/// `--until`, `memories.jsonl:3: "at"`), `forms` what the error says the door takes.
pub fn parse_instant(
    field: &str,
    text: &str,
    end_of_day: bool,
    forms: InstantForms,
) -> Result<Instant, Error> {
    let shown = quote(&truncate(text));
    let bad = || refuse_form(field, &shown, forms);
    let b = text.trim().as_bytes();
    let num = |at: usize, len: usize| -> Option<i64> {
        let s = b.get(at..at + len)?;
        s.iter().try_fold(0, |n, c| {
            c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
        })
    };
    let (y, mo, d) = match (num(0, 4), b.get(4), num(5, 2), b.get(7), num(8, 2)) {
        (Some(y), Some(b'-'), Some(mo), Some(b'-'), Some(d)) => (y, mo, d),
        _ => return Err(bad()),
    };
    let (mut h, mut mi, mut sec, mut ms, mut off) = (0i64, 0i64, 0i64, 0i64, 0i64);
    let mut i = 10;
    if b.len() > 10 {
        if !matches!(b[10], b'T' | b't' | b' ') {
            return Err(bad());
        }
        match (num(11, 2), b.get(13), num(14, 2)) {
            (Some(hh), Some(b':'), Some(mm)) => (h, mi) = (hh, mm),
            _ => return Err(bad()),
        }
        i = 16;
        if b.get(i) == Some(&b':') {
            sec = num(i + 1, 2).ok_or_else(bad)?;
            i += 3;
            if b.get(i) == Some(&b'.') {
                let start = i + 1;
                i = start;
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
                if i == start {
                    return Err(bad());
                }
                // Truncated to milliseconds: .9999 stays in its second.
                ms = b[start..i]
                    .iter()
                    .chain(b"00")
                    .take(3)
                    .fold(0, |acc, c| acc * 10 + i64::from(c - b'0'));
            }
        }
        match b.get(i) {
            None => {}
            Some(b'Z' | b'z') => i += 1,
            Some(&sign @ (b'+' | b'-')) => {
                let oh = num(i + 1, 2).ok_or_else(bad)?;
                let om = match b.len() - i {
                    3 => 0,
                    6 if b[i + 3] == b':' => num(i + 4, 2).ok_or_else(bad)?,
                    5 => num(i + 3, 2).ok_or_else(bad)?,
                    _ => return Err(bad()),
                };
                if oh > 23 || om > 59 {
                    return Err(invalid(field, &shown, " (offsets run to ±23:59)"));
                }
                off = (oh * 60 + om) * if sign == b'+' { 1 } else { -1 };
                i = b.len();
            }
            _ => return Err(bad()),
        }
    }
    if i != b.len() {
        return Err(bad());
    }
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) {
        return Err(invalid(field, &shown, ""));
    }
    if h > 23 || mi > 59 || sec > 59 {
        return Err(invalid(
            field,
            &shown,
            " (times run from 00:00:00 to 23:59:59)",
        ));
    }
    let mut t = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi - off) * 60_000 + sec * 1000 + ms;
    if b.len() == 10 && end_of_day {
        t += DAY_MILLIS - 1;
    }
    if !(MIN_MILLIS..=MAX_MILLIS).contains(&t) {
        return Err(invalid(field, &shown, OUT_OF_RANGE));
    }
    Ok(Instant { millis: t })
}

fn days_in_month(y: i64, m: i64) -> i64 {
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let (yy, mm) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

/// The date of a day since 1970-01-01 (Hinnant's `civil_from_days`).
fn civil_from_days(day: i64) -> (i64, i64, i64) {
    let z = day + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_window_is_refused_and_a_one_instant_window_taken() {
        let at = |t: &str| parse_instant("since", t, false, InstantForms::Text).unwrap();
        let (may, june) = (at("2023-05-01"), at("2023-06-01"));
        assert!(check_window(Some(may), Some(june)).is_ok());
        assert!(check_window(Some(may), Some(may)).is_ok());
        assert!(check_window(None, Some(may)).is_ok() && check_window(Some(may), None).is_ok());
        let e = check_window(Some(june), Some(may)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "since (2023-06-01T00:00:00.000Z) is after until (2023-05-01T00:00:00.000Z): nothing can match"
        );
    }

    fn iso(v: &str, end_of_day: bool) -> String {
        parse_instant("asOf", v, end_of_day, InstantForms::Text)
            .unwrap_or_else(|e| panic!("{v:?}: {e}"))
            .iso()
    }

    fn err(v: &str) -> String {
        match parse_instant("asOf", v, false, InstantForms::Text) {
            Ok(t) => panic!("{v:?} was accepted as {}", t.iso()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn accepted_forms_in_utc_milliseconds() {
        for (v, eod, want) in [
            ("2026-03-01", false, "2026-03-01T00:00:00.000Z"),
            ("2023-05-08", true, "2023-05-08T23:59:59.999Z"),
            ("  2026-03-01\n", false, "2026-03-01T00:00:00.000Z"),
            ("2026-03-01T12:00Z", false, "2026-03-01T12:00:00.000Z"),
            ("2026-03-01T12:00", false, "2026-03-01T12:00:00.000Z"),
            ("2026-03-01t12:00z", false, "2026-03-01T12:00:00.000Z"),
            ("2026-03-01 12:00:30", false, "2026-03-01T12:00:30.000Z"),
            ("2026-03-01T12:00:05.1", false, "2026-03-01T12:00:05.100Z"),
            (
                "2026-03-01T12:00:05.9999999Z",
                false,
                "2026-03-01T12:00:05.999Z",
            ),
            (
                "2026-03-01T12:00:05.1234+02:00",
                false,
                "2026-03-01T10:00:05.123Z",
            ),
            ("2026-03-01T01:30-0130", false, "2026-03-01T03:00:00.000Z"),
            ("2026-03-01T12:00+02", false, "2026-03-01T10:00:00.000Z"),
            ("2026-03-01T12:00-23:59", false, "2026-03-02T11:59:00.000Z"),
            ("2024-02-29T23:59:59.999Z", true, "2024-02-29T23:59:59.999Z"),
            ("2000-01-01T00:00+01:00", false, "1999-12-31T23:00:00.000Z"),
            (
                "1969-12-31T23:59:59.999Z",
                false,
                "1969-12-31T23:59:59.999Z",
            ),
            ("0001-01-01", false, "0001-01-01T00:00:00.000Z"),
            ("9999-12-31", true, "9999-12-31T23:59:59.999Z"),
            ("2000-02-29", false, "2000-02-29T00:00:00.000Z"),
        ] {
            assert_eq!(iso(v, eod), want, "{v:?}");
        }
        // end_of_day moves a date alone only.
        assert_eq!(iso("2023-05-08T00:00Z", true), "2023-05-08T00:00:00.000Z");
    }

    #[test]
    fn milliseconds_since_the_epoch() {
        let ms = |v| {
            parse_instant("x", v, false, InstantForms::Text)
                .unwrap()
                .millis()
        };
        assert_eq!(ms("1970-01-01T00:00:01Z"), 1000);
        assert_eq!(ms("1969-12-31T23:59:59.999Z"), -1);
        assert_eq!(ms("0001-01-01"), MIN_MILLIS);
        assert_eq!(ms("9999-12-31T23:59:59.999Z"), MAX_MILLIS);
        assert_eq!(ms("2026-03-01T12:00Z"), 1_772_366_400_000);
    }

    #[test]
    fn every_day_round_trips() {
        // From 0001 to 9999 through the calendar, day by day: days_from_civil and
        // civil_from_days are inverses, and each day is the one after the one before.
        let mut prev = days_from_civil(1, 1, 1) - 1;
        for y in 1..=9999 {
            for m in 1..=12 {
                for d in 1..=days_in_month(y, m) {
                    let day = days_from_civil(y, m, d);
                    assert_eq!(day, prev + 1, "{y}-{m}-{d}");
                    assert_eq!(civil_from_days(day), (y, m, d));
                    prev = day;
                }
            }
        }
    }

    #[test]
    fn malformed_values_say_what_to_pass() {
        for bad in [
            "",
            "yesterday",
            "2026-3-1",
            "26-03-01",
            "2026-03-01T12",
            "2026-03-01Tx",
            "2026-03-01T",
            "2026-03-01T12:00Zjunk",
            "2026-03-01T12:00:5",
            "2026-03-01T12:00:05.",
            "2026-03-01T12:00.5",
            "2026-03-01T12:00+2",
            "2026-03-01T12:00+02:0",
            "2026-03-01T12:00+02:000",
            "2026-03-01T12:00+0200Z",
            "2026-03-01T12:00 Z",
            "2026-03-01_12:00",
            "+02026-03-01",
            "2026-03-01T1２:00",
        ] {
            let e = err(bad);
            assert!(
                e.starts_with("asOf must be an ISO 8601 date or time such as 2026-03-01 or 2026-03-01T12:00Z, not \""),
                "{bad:?}: {e}"
            );
        }
        // Except trailing white space, which is trimmed as leading white space is.
        assert_eq!(iso("2026-03-01T12:00Z ", false), "2026-03-01T12:00:00.000Z");
    }

    #[test]
    fn values_off_the_calendar_or_clock_are_not_valid() {
        for (bad, why) in [
            ("2023-02-29", ""),
            ("2023-02-30", ""),
            ("1900-02-29", ""),
            ("2026-13-01", ""),
            ("2026-00-10", ""),
            ("2026-04-31", ""),
            ("2026-04-00", ""),
            ("0000-01-01", OUT_OF_RANGE),
            ("2026-03-01T24:00", " (times run from 00:00:00 to 23:59:59)"),
            (
                "2026-03-01T24:00Z",
                " (times run from 00:00:00 to 23:59:59)",
            ),
            ("2026-03-01T12:60", " (times run from 00:00:00 to 23:59:59)"),
            (
                "2026-03-01T23:59:60Z",
                " (times run from 00:00:00 to 23:59:59)",
            ),
            ("2026-03-01T12:00+24:00", " (offsets run to ±23:59)"),
            ("2026-03-01T12:00+02:60", " (offsets run to ±23:59)"),
            ("0001-01-01T00:00+00:01", OUT_OF_RANGE),
            ("9999-12-31T23:59-00:01", OUT_OF_RANGE),
        ] {
            assert_eq!(
                err(bad),
                format!("asOf is not a valid date or time: {bad:?}{why}")
            );
        }
    }

    #[test]
    fn errors_name_the_field_and_shorten_long_values() {
        let long = "x".repeat(100);
        let e = parse_instant("--until", &long, true, InstantForms::TextOrDate).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("--until must be a Date or an ISO 8601 date or time such as 2026-03-01 or 2026-03-01T12:00Z, not \"{}...\"", "x".repeat(40))
        );
        assert_eq!(e.kind(), crate::ErrorKind::InvalidOption);
        assert_eq!(
            not_an_instant("at", "42", InstantForms::TextOrDate).to_string(),
            "at must be a Date or an ISO 8601 date or time such as 2026-03-01 or 2026-03-01T12:00Z, not 42"
        );
    }

    #[test]
    fn values_are_shown_as_json_strings() {
        assert_eq!(
            err("a\"b\\c\n\u{1}\u{8}é"),
            r#"asOf must be an ISO 8601 date or time such as 2026-03-01 or 2026-03-01T12:00Z, not "a\"b\\c\n\u0001\bé""#
        );
    }

    #[test]
    fn a_date_value_in_milliseconds() {
        let t = Instant::from_millis("since", 1_772_366_400_123.0, "x").unwrap();
        assert_eq!(t.iso(), "2026-03-01T12:00:00.123Z");
        assert_eq!(
            Instant::from_millis("since", -1.0, "x").unwrap().iso(),
            "1969-12-31T23:59:59.999Z"
        );
        let e = |ms| {
            Instant::from_millis("since", ms, "\"Invalid Date\"")
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            e(f64::NAN),
            "since is not a valid date or time: \"Invalid Date\""
        );
        for bad in [MIN_MILLIS as f64 - 1.0, MAX_MILLIS as f64 + 1.0] {
            assert_eq!(
                e(bad),
                format!("since is not a valid date or time: \"Invalid Date\"{OUT_OF_RANGE}")
            );
        }
    }
}
