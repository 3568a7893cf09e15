//! The field tables the hot path walks with: for every message type of a profile's descriptor pool,
//! its fields by number (name, kind, repeated/map/packable, the table of a nested message type),
//! built once when the profile is compiled. Looking a field up is an array index (numbers below
//! 256) or a binary search, with no reference counting, so inspecting a message touches no shared
//! counter.

use std::collections::HashMap;

use prost_reflect::{DescriptorPool, Kind};

/// Field numbers below this are looked up by direct index.
const DENSE_LIMIT: u32 = 256;

/// One field of a message type.
#[derive(Debug)]
pub struct FieldEntry {
    pub number: u32,
    pub name: Box<str>,
    pub kind: Kind,
    /// The table of the field's message type (the entry type for a map field).
    pub message: Option<usize>,
    pub list: bool,
    pub map: bool,
    /// A repeated scalar that may arrive packed (one length-delimited run).
    pub packable: bool,
}

/// The fields of one message type.
#[derive(Debug)]
pub struct MessageTable {
    pub full_name: Box<str>,
    /// Sorted by number.
    fields: Vec<FieldEntry>,
    /// `dense[n]` = position + 1 of field `n` in `fields`, 0 when absent.
    dense: Vec<u16>,
}

impl MessageTable {
    pub fn field(&self, number: u32) -> Option<&FieldEntry> {
        if number < DENSE_LIMIT {
            let pos = *self.dense.get(number as usize)?;
            return pos
                .checked_sub(1)
                .and_then(|p| self.fields.get(usize::from(p)));
        }
        self.fields
            .binary_search_by_key(&number, |f| f.number)
            .ok()
            .map(|i| &self.fields[i])
    }
}

/// Every message type of a descriptor pool.
#[derive(Debug)]
pub struct Schema {
    tables: Vec<MessageTable>,
    by_name: HashMap<String, usize>,
}

impl Schema {
    pub fn new(pool: &DescriptorPool) -> Schema {
        let by_name: HashMap<String, usize> = pool
            .all_messages()
            .enumerate()
            .map(|(i, m)| (m.full_name().to_string(), i))
            .collect();
        let tables = pool
            .all_messages()
            .map(|m| {
                let mut fields: Vec<FieldEntry> = m
                    .fields()
                    .map(|f| {
                        let kind = f.kind();
                        let message = kind
                            .as_message()
                            .and_then(|d| by_name.get(d.full_name()).copied());
                        FieldEntry {
                            number: f.number(),
                            name: f.name().into(),
                            message,
                            list: f.is_list(),
                            map: f.is_map(),
                            packable: f.is_list()
                                && !matches!(kind, Kind::String | Kind::Bytes | Kind::Message(_)),
                            kind,
                        }
                    })
                    .collect();
                fields.sort_by_key(|f| f.number);
                let top = fields
                    .iter()
                    .map(|f| f.number)
                    .filter(|&n| n < DENSE_LIMIT)
                    .max()
                    .unwrap_or(0);
                let mut dense = vec![0u16; top as usize + 1];
                for (i, f) in fields.iter().enumerate() {
                    if f.number < DENSE_LIMIT {
                        dense[f.number as usize] = u16::try_from(i + 1).unwrap_or(0);
                    }
                }
                MessageTable {
                    full_name: m.full_name().into(),
                    fields,
                    dense,
                }
            })
            .collect();
        Schema { tables, by_name }
    }

    /// The table index of message type `full_name`.
    pub fn index_of(&self, full_name: &str) -> Option<usize> {
        self.by_name.get(full_name).copied()
    }

    pub fn table(&self, index: usize) -> Option<&MessageTable> {
        self.tables.get(index)
    }
}
