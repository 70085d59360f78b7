//! How strongly an item is about an entity, and the merging of repeated mentions.
//!
//! # The formula
//! Each occurrence weighs `kind_weight(kind) * position_weight(position) * factor`, where
//! `factor` is 1 except for weak forms the extractor marks (a single capitalised word, a plain
//! one-word code span, a path's base name). For an entity mentioned `n` times whose heaviest
//! occurrence weighs `w`:
//!
//! ```text
//! strength = clamp(w * (1 + COUNT_BONUS * (1 - 1 / sqrt(n))), MIN_STRENGTH, 1)
//! ```
//!
//! so repetition helps sublinearly and saturates at `1 + COUNT_BONUS` times the best single
//! mention: a name in the heading outweighs the same name said many times in passing. `sqrt` is
//! used (not `ln`) because IEEE 754 rounds it exactly, so strengths are bit-identical on every
//! platform. The entity's kind is the kind of its heaviest occurrence (the first on ties); its
//! display form is its first occurrence.

use std::collections::BTreeMap;

use super::{EntityKind, Mention, Position, MAX_NAME_CHARS, MIN_NAME_CHARS};

/// Error codes are the most specific thing a text can name.
pub const KIND_WEIGHT_ERROR_CODE: f32 = 0.9;
/// Tickets name exactly one piece of work.
pub const KIND_WEIGHT_TICKET: f32 = 0.9;
/// The heading subject is what the whole item is about.
pub const KIND_WEIGHT_TOPIC: f32 = 0.9;
/// Flags, identifiers, files and hosts are exact, but texts name them in passing more often.
pub const KIND_WEIGHT_FLAG: f32 = 0.8;
pub const KIND_WEIGHT_IDENTIFIER: f32 = 0.8;
pub const KIND_WEIGHT_FILE: f32 = 0.8;
pub const KIND_WEIGHT_HOST: f32 = 0.8;
/// Versions and capitalised names are useful but noisier.
pub const KIND_WEIGHT_VERSION: f32 = 0.6;
pub const KIND_WEIGHT_NAME: f32 = 0.6;
/// A code span that is no more specific kind (`npm ci`, `'utf8'`).
pub const KIND_WEIGHT_CODE: f32 = 0.5;

/// Position weights: a heading names the subject, a code span marks something exact, body text
/// mentions things in passing.
pub const POSITION_WEIGHT_HEADING: f32 = 1.0;
pub const POSITION_WEIGHT_CODE: f32 = 0.85;
pub const POSITION_WEIGHT_BODY: f32 = 0.7;

/// Factor on a single capitalised word that is not sentence-initial ("Falcon", "Buffer"):
/// often a name, often just emphasis or a type.
pub const FACTOR_SINGLE_WORD_NAME: f32 = 0.6;
/// Factor on a code span holding one plain lowercase word (`path`, `'utf8'`): mostly parameter
/// names and literals.
pub const FACTOR_PLAIN_CODE_WORD: f32 = 0.5;
/// Factor on the base name derived from a path (`nginx.conf` from `/etc/nginx/nginx.conf`).
pub const FACTOR_PATH_BASENAME: f32 = 0.9;

/// How much repetition can add, as a fraction of the best single occurrence.
pub const COUNT_BONUS: f32 = 0.5;
/// Floor of every strength, so that none is zero.
pub const MIN_STRENGTH: f32 = 0.01;
/// Most mentions kept per item (the strongest).
pub const MAX_MENTIONS: usize = 32;

pub(crate) fn kind_weight(kind: EntityKind) -> f32 {
    match kind {
        EntityKind::ErrorCode => KIND_WEIGHT_ERROR_CODE,
        EntityKind::Ticket => KIND_WEIGHT_TICKET,
        EntityKind::Topic => KIND_WEIGHT_TOPIC,
        EntityKind::Flag => KIND_WEIGHT_FLAG,
        EntityKind::Identifier => KIND_WEIGHT_IDENTIFIER,
        EntityKind::File => KIND_WEIGHT_FILE,
        EntityKind::Host => KIND_WEIGHT_HOST,
        EntityKind::Version => KIND_WEIGHT_VERSION,
        EntityKind::Name => KIND_WEIGHT_NAME,
        EntityKind::Code => KIND_WEIGHT_CODE,
    }
}

pub(crate) fn position_weight(pos: Position) -> f32 {
    match pos {
        Position::Heading => POSITION_WEIGHT_HEADING,
        Position::Code => POSITION_WEIGHT_CODE,
        Position::Body => POSITION_WEIGHT_BODY,
    }
}

/// The strength of an entity whose heaviest occurrence weighs `best`, mentioned `count` times.
pub fn strength(best: f32, count: u32) -> f32 {
    let n = count.max(1) as f32;
    let s = best * (1.0 + COUNT_BONUS * (1.0 - 1.0 / n.sqrt()));
    s.clamp(MIN_STRENGTH, 1.0)
}

struct Entry {
    display: String,
    kind: EntityKind,
    best: f32,
    count: u32,
}

/// Collects occurrences, merging them by canonical name.
#[derive(Default)]
pub(crate) struct Accumulator {
    entries: BTreeMap<String, Entry>,
}

impl Accumulator {
    /// Records one occurrence. `name` must already be canonical; names outside the length
    /// limits are dropped.
    pub(crate) fn add(
        &mut self,
        name: String,
        display: &str,
        kind: EntityKind,
        pos: Position,
        factor: f32,
    ) {
        let chars = name.chars().count();
        if !(MIN_NAME_CHARS..=MAX_NAME_CHARS).contains(&chars) {
            return;
        }
        let weight = kind_weight(kind) * position_weight(pos) * factor;
        match self.entries.get_mut(&name) {
            Some(e) => {
                e.count = e.count.saturating_add(1);
                if weight > e.best {
                    e.best = weight;
                    e.kind = kind;
                }
            }
            None => {
                let display = display.trim();
                let display = if display.chars().count() > MAX_NAME_CHARS {
                    name.clone()
                } else {
                    display.to_string()
                };
                self.entries.insert(
                    name,
                    Entry {
                        display,
                        kind,
                        best: weight,
                        count: 1,
                    },
                );
            }
        }
    }

    /// The mentions, strongest first (then by name), at most [`MAX_MENTIONS`].
    pub(crate) fn finish(self) -> Vec<Mention> {
        let mut out: Vec<Mention> = self
            .entries
            .into_iter()
            .map(|(name, e)| Mention {
                name,
                display: e.display,
                kind: e.kind,
                strength: strength(e.best, e.count),
                count: e.count,
            })
            .collect();
        // BTreeMap order is by name, and the sort is stable: ties stay in name order.
        out.sort_by(|a, b| b.strength.total_cmp(&a.strength));
        out.truncate(MAX_MENTIONS);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repetition_is_sublinear_and_bounded() {
        let w = KIND_WEIGHT_NAME * POSITION_WEIGHT_BODY;
        assert_eq!(strength(w, 1), w);
        assert!(strength(w, 4) > strength(w, 2));
        assert!(strength(w, 4) - strength(w, 2) < strength(w, 2) - strength(w, 1));
        assert!(strength(w, u32::MAX) <= w * (1.0 + COUNT_BONUS));
        assert_eq!(strength(1.0, 100), 1.0);
        assert_eq!(strength(0.0, 1), MIN_STRENGTH);
    }

    #[test]
    fn heading_beats_repetition_in_body() {
        let heading = strength(KIND_WEIGHT_TOPIC * POSITION_WEIGHT_HEADING, 1);
        let body = strength(KIND_WEIGHT_NAME * POSITION_WEIGHT_BODY, 50);
        assert!(heading > body);
    }

    #[test]
    fn merge_keeps_first_display_and_heaviest_kind() {
        let mut acc = Accumulator::default();
        acc.add("x.y".into(), "x.y()", EntityKind::Code, Position::Body, 1.0);
        acc.add(
            "x.y".into(),
            "x.y",
            EntityKind::Identifier,
            Position::Heading,
            1.0,
        );
        acc.add("z".into(), "z", EntityKind::Code, Position::Body, 1.0);
        let m = acc.finish();
        assert_eq!(m.len(), 1, "too-short names are dropped");
        assert_eq!(m[0].display, "x.y()");
        assert_eq!(m[0].kind, EntityKind::Identifier);
        assert_eq!(m[0].count, 2);
    }
}
