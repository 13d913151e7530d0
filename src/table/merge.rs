//! Merging a group's adjacent slots into one piece per entry, where that is cheaper.
//!
//! Each piece is one copy for the writer and at least one cache line read. When a
//! group's columns have few distinct values (the resort sales' resorts, categories,
//! prices) their pieces stay in cache and one piece per column is the cheapest layout.
//! When they are mostly distinct (sensor readings, ids, free text), every entry reads
//! as many scattered lines as it has columns: the same bytes stored once per entry, as
//! one piece, are one copy and a sequential read. A group is merged when its distinct
//! combinations take at most [`MAX_GROWTH`] times the bytes of its distinct pieces.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::template::Shape;

/// How much more memory a merged group may take than its pieces one by one.
pub const MAX_GROWTH: u64 = 4;

/// Merges the groups of `shape` where that is cheaper (see the module), rewriting
/// `refs` (`shape.slots` piece numbers per entry, in cycle order) and appending the
/// merged pieces to `texts`.
pub fn merge_groups(shape: &mut Shape, refs: &mut Vec<u32>, texts: &mut Vec<Cow<'_, [u8]>>) {
    let slots = shape.slots;
    if slots < 2 {
        return;
    }
    let entries = refs.len() / slots;
    let len = |id: u32, texts: &[Cow<[u8]>]| texts[id as usize].len() as u64;
    let mut merge = Vec::with_capacity(shape.groups.len());
    let mut start = 0;
    for g in &shape.groups {
        let n = g.slots;
        let mut worth = false;
        if n >= 2 {
            let (mut seen, mut apart) = (HashSet::new(), 0u64);
            let (mut combos, mut merged) = (HashSet::new(), 0u64);
            for e in 0..entries {
                let run = &refs[e * slots + start..e * slots + start + n];
                for &id in run {
                    if seen.insert(id) {
                        apart += len(id, texts);
                    }
                }
                if combos.insert(run) {
                    merged += run.iter().map(|&id| len(id, texts)).sum::<u64>();
                }
            }
            worth = merged <= MAX_GROWTH * apart;
        }
        merge.push(worth);
        start += n;
    }
    if !merge.contains(&true) {
        return;
    }
    let new_slots: usize = shape
        .groups
        .iter()
        .zip(&merge)
        .map(|(g, &m)| if m { 1 } else { g.slots })
        .sum();
    let mut numbers: Vec<HashMap<Vec<u32>, u32>> = vec![HashMap::new(); merge.len()];
    let mut merged_refs = Vec::with_capacity(entries * new_slots);
    for e in 0..entries {
        let mut start = e * slots;
        for (g, group) in shape.groups.iter().enumerate() {
            let run = &refs[start..start + group.slots];
            start += group.slots;
            if !merge[g] {
                merged_refs.extend_from_slice(run);
                continue;
            }
            let next = texts.len() as u32;
            let id = *numbers[g].entry(run.to_vec()).or_insert_with(|| {
                let text: Vec<u8> = run
                    .iter()
                    .flat_map(|&id| texts[id as usize].to_vec())
                    .collect();
                texts.push(Cow::Owned(text));
                next
            });
            merged_refs.push(id);
        }
    }
    for (group, &m) in shape.groups.iter_mut().zip(&merge) {
        if m {
            group.slots = 1;
        }
    }
    shape.slots = new_slots;
    shape.next_slots = shape.groups[shape.end_group + 1..]
        .iter()
        .map(|g| g.slots)
        .sum();
    *refs = merged_refs;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::template::{Shape, Token};

    fn shape(slots: usize) -> Shape {
        let mut tokens = vec![Token::Seq];
        tokens.extend(std::iter::repeat_n(Token::Slot, slots));
        tokens.push(Token::Text(b"}\n".to_vec()));
        Shape::new(&tokens)
    }

    #[test]
    fn distinct_columns_merge_and_repeated_ones_do_not() {
        // Four entries of three columns: all distinct, so one piece per entry.
        let mut texts: Vec<Cow<[u8]>> = (0..12).map(|i| Cow::Owned(vec![b'a' + i as u8])).collect();
        let mut refs: Vec<u32> = (0..12).collect();
        let mut s = shape(3);
        merge_groups(&mut s, &mut refs, &mut texts);
        assert_eq!((s.slots, s.groups[0].slots), (1, 1));
        assert_eq!(refs, [12, 13, 14, 15]);
        assert_eq!(&*texts[13], b"def");

        // Three values per column over 81 entries: 9 small pieces, not 27 combinations.
        let mut texts: Vec<Cow<[u8]>> = (0..9)
            .map(|i| Cow::Owned(vec![b'a' + i as u8; 10]))
            .collect();
        let mut refs: Vec<u32> = (0..81)
            .flat_map(|e| [e % 3, 3 + e / 3 % 3, 6 + e / 9 % 3])
            .collect();
        let before = refs.clone();
        let mut s = shape(3);
        merge_groups(&mut s, &mut refs, &mut texts);
        assert_eq!(s.slots, 3);
        assert_eq!(refs, before);
        assert_eq!(texts.len(), 9);
    }
}
