//! A row's template, and the shape the writer loops over.
//!
//! The template is the row's parts in order: text, table slots (the entry's pieces),
//! the sequence number, the run id, the worker id and the send time. Everything but the
//! slots and the sequence number is the same for every row of a batch ("consts").
//!
//! The writer does not loop over rows as they read, but over a *cycle* that starts
//! right after the sequence number (or, without one, at the first slot): the row's
//! remaining parts, then the parts of the next row before its sequence number. So what
//! ends one row and begins the next (`...,"WORKER_ID":17}\n{"TXID":"run-17-`) is one
//! run of consts, written as one copy. Slots that come before the sequence number in
//! the row are read from the next entry in the cycle; the table stores each entry's
//! piece numbers in cycle order, so the writer reads them in one sweep.

use crate::error::GenError;
use crate::sale_time::TimeForm;

/// A part of a row, as the template names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    Text(Vec<u8>),
    Slot,
    Seq,
    RunId,
    WorkerId,
    SendTime(TimeForm),
}

/// A part that is the same for every row of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Const {
    Text(Vec<u8>),
    RunId,
    WorkerId,
    SendTime(TimeForm),
}

/// Slots, then consts: a stretch of the cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub slots: usize,
    pub consts: Vec<Const>,
}

/// The cycle the writer loops over (see the module).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// Whether the row has a sequence number (written at the start of the cycle).
    pub has_seq: bool,
    pub groups: Vec<Group>,
    /// A row ends inside group `end_group`, after `end_consts` of its consts; the rest
    /// of the cycle belongs to the next row.
    pub end_group: usize,
    pub end_consts: usize,
    /// Slots the row has before its sequence number: the cycle reads them from the
    /// next entry. They are the last `next_slots` slots of the cycle.
    pub next_slots: usize,
    /// Slots per row.
    pub slots: usize,
}

fn bad(at: usize, what: &str) -> GenError {
    GenError::BadTable(format!("template[{at}]: {what}"))
}

/// The tokens of `(kind, payload)` pairs, checked: kinds are `text`, `slot`, `seq`,
/// `run_id`, `worker_id` and `send_time` (payload `tz`, `ntz` or `date`); only text and
/// send_time have a payload; text is UTF-8; the row's one newline ends its last token,
/// which is text; there is at most one `seq`.
pub fn parse(raw: &[(String, Vec<u8>)]) -> Result<Vec<Token>, GenError> {
    if raw.is_empty() {
        return Err(GenError::BadTable(
            "template: empty; a row ends with a text token ending in a newline".into(),
        ));
    }
    let mut tokens = Vec::with_capacity(raw.len());
    for (at, (kind, payload)) in raw.iter().enumerate() {
        let token = match kind.as_str() {
            "text" => Token::Text(payload.clone()),
            "slot" => Token::Slot,
            "seq" => Token::Seq,
            "run_id" => Token::RunId,
            "worker_id" => Token::WorkerId,
            "send_time" => Token::SendTime(
                TimeForm::from_name(payload)
                    .ok_or_else(|| bad(at, "send_time takes tz, ntz or date"))?,
            ),
            other => {
                return Err(bad(
                    at,
                    &format!(
                        "unknown kind {other:?} (text, slot, seq, run_id, worker_id, send_time)"
                    ),
                ))
            }
        };
        if !matches!(token, Token::Text(_) | Token::SendTime(_)) && !payload.is_empty() {
            return Err(bad(at, &format!("{kind} takes no payload")));
        }
        if let Token::Text(text) = &token {
            if std::str::from_utf8(text).is_err() {
                return Err(bad(at, "text is not UTF-8"));
            }
            let last = at + 1 == raw.len();
            let newlines = text.iter().filter(|&&b| b == b'\n').count();
            if newlines > usize::from(last) || (last && text.last() != Some(&b'\n')) {
                return Err(bad(
                    at,
                    "a row's only newline ends its last token, which is text",
                ));
            }
        } else if at + 1 == raw.len() {
            return Err(bad(at, "a row ends with a text token ending in a newline"));
        }
        if token == Token::Seq && tokens.contains(&Token::Seq) {
            return Err(bad(at, "a row has at most one seq"));
        }
        tokens.push(token);
    }
    Ok(tokens)
}

impl Shape {
    /// The cycle of checked `tokens` (see [`parse`]).
    pub fn new(tokens: &[Token]) -> Shape {
        let seq_at = tokens.iter().position(|t| *t == Token::Seq);
        let first_slot = tokens.iter().position(|t| *t == Token::Slot);
        let (before, after) = match (seq_at, first_slot) {
            (Some(p), _) => (&tokens[..p], &tokens[p + 1..]),
            (None, Some(p)) => (&tokens[..p], &tokens[p..]),
            (None, None) => (&tokens[..0], tokens),
        };
        let mut groups = vec![Group {
            slots: 0,
            consts: Vec::new(),
        }];
        let mut end = (0, 0);
        for (i, token) in after.iter().chain(before).enumerate() {
            if i == after.len() {
                end = (groups.len() - 1, groups[groups.len() - 1].consts.len());
            }
            let group = groups.last_mut().expect("one group at least");
            let c = match token {
                Token::Slot if group.consts.is_empty() => {
                    group.slots += 1;
                    continue;
                }
                Token::Slot => {
                    groups.push(Group {
                        slots: 1,
                        consts: Vec::new(),
                    });
                    continue;
                }
                Token::Text(t) => Const::Text(t.clone()),
                Token::RunId => Const::RunId,
                Token::WorkerId => Const::WorkerId,
                Token::SendTime(f) => Const::SendTime(*f),
                Token::Seq => unreachable!("the one seq starts the cycle"),
            };
            group.consts.push(c);
        }
        if before.is_empty() {
            end = (groups.len() - 1, groups[groups.len() - 1].consts.len());
        }
        let next_slots = before.iter().filter(|t| **t == Token::Slot).count();
        Shape {
            has_seq: seq_at.is_some(),
            end_group: end.0,
            end_consts: end.1,
            next_slots,
            slots: groups.iter().map(|g| g.slots).sum(),
            groups,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Token {
        Token::Text(s.as_bytes().to_vec())
    }

    fn raw(tokens: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
        tokens
            .iter()
            .map(|(k, p)| (k.to_string(), p.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn the_resort_row_is_one_group_ending_in_the_next_rows_head() {
        let tokens = vec![
            text("{\"TXID\":\""),
            Token::RunId,
            text("-"),
            Token::Seq,
            Token::Slot,
            Token::Slot,
            Token::SendTime(TimeForm::Tz),
            text("}\n"),
        ];
        let shape = Shape::new(&tokens);
        assert!(shape.has_seq);
        assert_eq!(shape.groups.len(), 1);
        assert_eq!(shape.groups[0].slots, 2);
        assert_eq!(
            (shape.end_group, shape.end_consts, shape.next_slots),
            (0, 2, 0)
        );
        assert_eq!(shape.groups[0].consts.len(), 5);
    }

    #[test]
    fn slots_before_the_seq_come_last_in_the_cycle() {
        let tokens = vec![
            text("{\"A\":"),
            Token::Slot,
            text(",\"ID\":\""),
            Token::Seq,
            text("\""),
            Token::Slot,
            text("}\n"),
        ];
        let shape = Shape::new(&tokens);
        // cycle: `"` slot `}\n{"A":` slot `,"ID":"`
        assert_eq!(shape.groups.len(), 3);
        assert_eq!(shape.groups[0].slots, 0);
        assert_eq!(shape.groups[1].slots, 1);
        assert_eq!(shape.groups[2].slots, 1);
        assert_eq!(
            (shape.end_group, shape.end_consts, shape.next_slots),
            (1, 1, 1)
        );
        assert_eq!(shape.slots, 2);
    }

    #[test]
    fn without_a_seq_the_cycle_starts_at_the_first_slot() {
        let tokens = vec![text("{\"A\":"), Token::Slot, text("}\n")];
        let shape = Shape::new(&tokens);
        assert!(!shape.has_seq);
        assert_eq!(shape.groups.len(), 1);
        assert_eq!((shape.end_group, shape.end_consts), (0, 1));
        let only_consts = Shape::new(&[text("{}\n")]);
        assert_eq!(only_consts.groups.len(), 1);
        assert_eq!((only_consts.end_group, only_consts.end_consts), (0, 1));
    }

    #[test]
    fn bad_templates_name_the_token() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[], "template: empty"),
            (&[("txt", "x\n")], "template[0]: unknown kind \"txt\""),
            (
                &[("slot", "x"), ("text", "\n")],
                "template[0]: slot takes no payload",
            ),
            (
                &[("send_time", "utc"), ("text", "\n")],
                "template[0]: send_time takes",
            ),
            (
                &[("text", "a\nb"), ("text", "\n")],
                "template[0]: a row's only newline",
            ),
            (&[("text", "}")], "template[0]: a row's only newline"),
            (
                &[("text", "{"), ("slot", "")],
                "template[1]: a row ends with",
            ),
            (
                &[("seq", ""), ("seq", ""), ("text", "\n")],
                "template[1]: a row has at most one seq",
            ),
        ];
        for (tokens, want) in cases {
            let err = parse(&raw(tokens)).unwrap_err().to_string();
            assert!(err.starts_with(want), "{tokens:?}: {err}");
        }
        let not_utf8 = vec![("text".to_string(), vec![0xff, b'\n'])];
        assert!(parse(&not_utf8)
            .unwrap_err()
            .to_string()
            .contains("not UTF-8"));
    }
}
