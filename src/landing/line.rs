//! One NDJSON line into one row: a JSON object whose keys are the table's columns,
//! each value cast by its column's rule (`value.rs`), in one pass over the line.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::columns::{ColumnData, ColumnKind};
use super::value::{cast, Json};
use super::{variant, Column};

/// Why a line is left to the SQL path (the reason is not reported: that path words it).
#[derive(Debug)]
pub struct Deferred;

/// A key, borrowed from the line unless it has escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// Fills one value per column into `out` while reading the object's entries.
struct RowVisitor<'p> {
    columns: &'p [Column],
    check_keys: bool,
    out: &'p mut [ColumnData],
    seen: &'p mut [bool],
}

impl<'de> Visitor<'de> for RowVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut position = 0;
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let raw: &'de RawValue = map.next_value()?;
            // Keys usually come in the table's order: try the next column first.
            let i = match self.columns.get(position) {
                Some(c) if c.name == key => position,
                _ => match self.columns.iter().position(|c| c.name == key) {
                    Some(i) => i,
                    None if self.check_keys => return Err(de::Error::custom("unknown key")),
                    None => continue,
                },
            };
            position = i + 1;
            if self.seen[i] {
                return Err(de::Error::custom("duplicated key"));
            }
            self.seen[i] = true;
            let kind = self.columns[i].kind;
            let taken = if kind == ColumnKind::Variant {
                variant::take(raw.get(), &mut self.out[i])
            } else {
                let value = Json::of(raw.get()).ok_or_else(|| de::Error::custom("value"))?;
                cast(kind, &value, &mut self.out[i])
            };
            if !taken {
                return Err(de::Error::custom("not taken"));
            }
        }
        if self.seen.iter().all(|&s| s) {
            Ok(())
        } else {
            Err(de::Error::custom("missing key"))
        }
    }
}

/// Casts `line` into one value per column of `out`, or leaves it (the caller then
/// drops what was pushed for it). `seen` is scratch space, one flag per column.
pub fn parse_line(
    line: &str,
    columns: &[Column],
    check_keys: bool,
    out: &mut [ColumnData],
    seen: &mut [bool],
) -> Result<(), Deferred> {
    seen.fill(false);
    let mut de = serde_json::Deserializer::from_str(line);
    let visitor = RowVisitor {
        columns,
        check_keys,
        out,
        seen,
    };
    de.deserialize_map(visitor).map_err(|_| Deferred)?;
    de.end().map_err(|_| Deferred)
}
