//! The embedded, transactional, crash-safe configuration store.
//!
//! One redb database file (`<data-dir>/portcullis.redb`) holds every table. redb commits are
//! copy-on-write with a checksummed root and fsync before `commit` returns, so a write is durable
//! before it is acknowledged and a crash (kill -9) leaves either the old or the new state, never a
//! mix. Values are JSON documents; keys are strings whose prefixes give collections their order.
//! [`Retention`] is how the event logs kept in it are bounded.

mod retention;

pub use retention::Retention;

use std::path::Path;

use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};

/// The tables of the store. Every table maps a string key to a JSON value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// Configuration objects by REST path (`/mgmt/tm/ltm/pool/~Common~p`).
    Objects,
    /// Uploaded-file metadata by file name.
    Files,
    /// Asynchronous tasks by collection path + id.
    Tasks,
    /// Users by name.
    Users,
    /// Auth tokens by token.
    Tokens,
    /// DNS zones by `view/zone`.
    Zones,
    /// Security events by time-ordered key.
    Events,
    /// Settings and counters of the node itself (machine id, certificate fingerprint, ...).
    Meta,
}

impl Table {
    const ALL: [Table; 8] = [
        Table::Objects,
        Table::Files,
        Table::Tasks,
        Table::Users,
        Table::Tokens,
        Table::Zones,
        Table::Events,
        Table::Meta,
    ];

    fn def(self) -> TableDefinition<'static, &'static str, &'static [u8]> {
        TableDefinition::new(match self {
            Table::Objects => "objects",
            Table::Files => "files",
            Table::Tasks => "tasks",
            Table::Users => "users",
            Table::Tokens => "tokens",
            Table::Zones => "zones",
            Table::Events => "events",
            Table::Meta => "meta",
        })
    }
}

/// A store failure: IO, corruption, or a value that is not the JSON expected.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store: {0}")]
    Db(String),
    #[error("store: bad value under {key}: {source}")]
    Value {
        key: String,
        source: serde_json::Error,
    },
}

macro_rules! db_err {
    ($($t:ty),*) => { $(impl From<$t> for StoreError { fn from(e: $t) -> Self { StoreError::Db(e.to_string()) } })* };
}
db_err!(
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

pub type Result<T> = std::result::Result<T, StoreError>;

/// The store's file name in the data directory.
pub const FILE: &str = "portcullis.redb";

/// What is wrong with a store file redb cannot open, in words an operator can act on.
fn unreadable(e: &redb::DatabaseError) -> String {
    match e {
        redb::DatabaseError::Storage(redb::StorageError::Io(io))
            if io.kind() == std::io::ErrorKind::UnexpectedEof =>
        {
            "the file is truncated (it ends inside its header or a page it refers to)".into()
        }
        redb::DatabaseError::Storage(redb::StorageError::Corrupted(why)) => {
            format!("the file is corrupt ({why})")
        }
        redb::DatabaseError::DatabaseAlreadyOpen => {
            "another process has it open (is a server already running on this data directory?)"
                .into()
        }
        other => other.to_string(),
    }
}

/// The store handle; cheap to share behind an `Arc`.
pub struct Store {
    db: Database,
}

impl Store {
    /// Opens the store in `dir`, creating it only when the file is absent, and every table.
    /// A store that exists but cannot be read is an error naming the file and what is wrong,
    /// never a fresh, empty store in its place (that would lose every object and user). The
    /// file is made readable by its owner only: it holds password hashes and token digests.
    pub fn open(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir)
            .map_err(|e| StoreError::Db(format!("{}: {e}", dir.display())))?;
        let path = dir.join(FILE);
        let shown = path.display();
        let db = match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Database::create(&path)?,
            Err(e) => return Err(StoreError::Db(format!("{shown}: {e}"))),
            Ok(m) if !m.is_file() => {
                return Err(StoreError::Db(format!("{shown}: not a regular file")));
            }
            Ok(m) if m.len() == 0 => {
                return Err(StoreError::Db(format!(
                    "{shown}: the store is empty (0 bytes), not a store that can be read; \
                     restore it from a backup, or move it away to start with an empty store"
                )));
            }
            Ok(_) => Database::open(&path).map_err(|e| {
                StoreError::Db(format!(
                    "{shown}: cannot be read as a store: {}",
                    unreadable(&e)
                ))
            })?,
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| StoreError::Db(format!("{shown}: {e}")))?;
        }
        let tx = db.begin_write()?;
        for t in Table::ALL {
            tx.open_table(t.def())?;
        }
        tx.commit()?;
        Ok(Store { db })
    }

    /// One value, if present.
    pub fn get(&self, table: Table, key: &str) -> Result<Option<serde_json::Value>> {
        let tx = self.db.begin_read()?;
        let t = tx.open_table(table.def())?;
        match t.get(key)? {
            Some(v) => Ok(Some(decode(key, v.value())?)),
            None => Ok(None),
        }
    }

    /// Every `(key, value)` whose key starts with `prefix`, in key order.
    pub fn list(&self, table: Table, prefix: &str) -> Result<Vec<(String, serde_json::Value)>> {
        let tx = self.db.begin_read()?;
        let t = tx.open_table(table.def())?;
        let mut out = Vec::new();
        for entry in t.range(prefix..)? {
            let (k, v) = entry?;
            let key = k.value();
            if !key.starts_with(prefix) {
                break;
            }
            out.push((key.to_string(), decode(key, v.value())?));
        }
        Ok(out)
    }

    /// Visits the entries under `prefix` from the last key backwards until `f` returns false.
    pub fn scan_rev(
        &self,
        table: Table,
        prefix: &str,
        mut f: impl FnMut(&str, serde_json::Value) -> bool,
    ) -> Result<()> {
        let tx = self.db.begin_read()?;
        let t = tx.open_table(table.def())?;
        let end = format!("{prefix}\u{10FFFF}");
        for entry in t.range::<&str>(prefix..end.as_str())?.rev() {
            let (k, v) = entry?;
            if !f(k.value(), decode(k.value(), v.value())?) {
                break;
            }
        }
        Ok(())
    }

    /// Visits the entries under `prefix` from `from` (inclusive) forwards until `f` returns false.
    pub fn scan_from(
        &self,
        table: Table,
        prefix: &str,
        from: &str,
        mut f: impl FnMut(&str, serde_json::Value) -> bool,
    ) -> Result<()> {
        let tx = self.db.begin_read()?;
        let t = tx.open_table(table.def())?;
        let end = format!("{prefix}\u{10FFFF}");
        let start = from.max(prefix);
        for entry in t.range::<&str>(start..end.as_str())? {
            let (k, v) = entry?;
            if !f(k.value(), decode(k.value(), v.value())?) {
                break;
            }
        }
        Ok(())
    }

    /// Visits the keys in `lo..hi` from the last backwards until `f` returns false, without
    /// reading their values (an index of keys alone is scanned this way).
    pub fn keys_rev(
        &self,
        table: Table,
        lo: &str,
        hi: &str,
        mut f: impl FnMut(&str) -> bool,
    ) -> Result<()> {
        let tx = self.db.begin_read()?;
        let t = tx.open_table(table.def())?;
        if lo >= hi {
            return Ok(());
        }
        for entry in t.range::<&str>(lo..hi)?.rev() {
            let (k, _) = entry?;
            if !f(k.value()) {
                break;
            }
        }
        Ok(())
    }

    /// How many keys lie in `lo..hi`, counting at most `limit`.
    pub fn count_range(&self, table: Table, lo: &str, hi: &str, limit: usize) -> Result<usize> {
        let tx = self.db.begin_read()?;
        let t = tx.open_table(table.def())?;
        if lo >= hi {
            return Ok(0);
        }
        let mut n = 0;
        for entry in t.range::<&str>(lo..hi)? {
            entry?;
            n += 1;
            if n >= limit {
                break;
            }
        }
        Ok(n)
    }

    /// The values of `keys`, read in one transaction (None for a missing key).
    pub fn get_many(
        &self,
        table: Table,
        keys: &[String],
    ) -> Result<Vec<Option<serde_json::Value>>> {
        let tx = self.db.begin_read()?;
        let t = tx.open_table(table.def())?;
        keys.iter()
            .map(|k| match t.get(k.as_str())? {
                Some(v) => Ok(Some(decode(k, v.value())?)),
                None => Ok(None),
            })
            .collect()
    }

    /// How many keys start with `prefix`.
    pub fn count(&self, table: Table, prefix: &str) -> Result<usize> {
        let tx = self.db.begin_read()?;
        let t = tx.open_table(table.def())?;
        let end = format!("{prefix}\u{10FFFF}");
        let mut n = 0;
        for entry in t.range::<&str>(prefix..end.as_str())? {
            entry?;
            n += 1;
        }
        Ok(n)
    }

    /// Runs `f` in one write transaction and commits it durably. If `f` fails, nothing is written.
    pub fn write<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&mut WriteTx<'_>) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        let tx = self.begin_write()?;
        let out = {
            let mut w = WriteTx { tx: &tx };
            f(&mut w)?
        };
        commit(tx)?;
        Ok(out)
    }

    // `write` is instantiated once per closure across the workspace: beginning and committing
    // stay out of line, in one copy each.
    fn begin_write(&self) -> Result<redb::WriteTransaction> {
        Ok(self.db.begin_write()?)
    }
}

fn commit(tx: redb::WriteTransaction) -> Result<()> {
    Ok(tx.commit()?)
}

/// A write transaction in progress; see [`Store::write`].
pub struct WriteTx<'a> {
    tx: &'a redb::WriteTransaction,
}

impl WriteTx<'_> {
    pub fn get(&self, table: Table, key: &str) -> Result<Option<serde_json::Value>> {
        let t = self.tx.open_table(table.def())?;
        let v = t.get(key)?;
        match v {
            Some(v) => Ok(Some(decode(key, v.value())?)),
            None => Ok(None),
        }
    }

    pub fn put(&mut self, table: Table, key: &str, value: &serde_json::Value) -> Result<()> {
        let bytes = serde_json::to_vec(value).map_err(|source| StoreError::Value {
            key: key.to_string(),
            source,
        })?;
        let mut t = self.tx.open_table(table.def())?;
        t.insert(key, bytes.as_slice())?;
        Ok(())
    }

    /// Removes a key; returns whether it was there.
    pub fn delete(&mut self, table: Table, key: &str) -> Result<bool> {
        let mut t = self.tx.open_table(table.def())?;
        let existed = t.remove(key)?.is_some();
        Ok(existed)
    }

    /// Every key under `prefix`, in order (to delete sub-collections with their parent).
    pub fn keys(&self, table: Table, prefix: &str) -> Result<Vec<String>> {
        self.first_keys(table, prefix, usize::MAX)
    }

    /// The first `limit` keys under `prefix`, in order (the oldest of a time-ordered collection).
    pub fn first_keys(&self, table: Table, prefix: &str, limit: usize) -> Result<Vec<String>> {
        let t = self.tx.open_table(table.def())?;
        let mut out = Vec::new();
        for entry in t.range(prefix..)? {
            let (k, _) = entry?;
            if out.len() >= limit || !k.value().starts_with(prefix) {
                break;
            }
            out.push(k.value().to_string());
        }
        Ok(out)
    }
}

fn decode(key: &str, bytes: &[u8]) -> Result<serde_json::Value> {
    serde_json::from_slice(bytes).map_err(|source| StoreError::Value {
        key: key.to_string(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_existing_store_that_cannot_be_read_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(&path, b"").unwrap();
        let e = Store::open(dir.path())
            .err()
            .expect("empty store")
            .to_string();
        assert!(
            e.contains(&path.display().to_string()) && e.contains("empty"),
            "{e}"
        );
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0, "left as it was");
        std::fs::write(&path, b"not a redb file, just some bytes").unwrap();
        let e = Store::open(dir.path()).err().expect("garbage").to_string();
        assert!(e.contains(&path.display().to_string()), "{e}");
        assert!(!e.contains("failed to fill whole buffer"), "{e}");
    }

    #[test]
    fn writes_are_atomic_and_visible_after_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = Store::open(dir.path()).unwrap();
            s.write(|tx| {
                tx.put(
                    Table::Objects,
                    "/mgmt/tm/ltm/pool/~Common~a",
                    &json!({"name": "a"}),
                )?;
                tx.put(
                    Table::Objects,
                    "/mgmt/tm/ltm/pool/~Common~b",
                    &json!({"name": "b"}),
                )?;
                Ok::<_, StoreError>(())
            })
            .unwrap();
            let failed: std::result::Result<(), StoreError> = s.write(|tx| {
                tx.put(
                    Table::Objects,
                    "/mgmt/tm/ltm/pool/~Common~c",
                    &json!({"name": "c"}),
                )?;
                Err(StoreError::Db("validation failed".into()))
            });
            assert!(failed.is_err());
        }
        let s = Store::open(dir.path()).unwrap();
        let items = s.list(Table::Objects, "/mgmt/tm/ltm/pool/").unwrap();
        assert_eq!(items.len(), 2, "the failed transaction wrote nothing");
        assert_eq!(
            s.get(Table::Objects, "/mgmt/tm/ltm/pool/~Common~b")
                .unwrap(),
            Some(json!({"name": "b"}))
        );
        assert!(
            s.list(Table::Objects, "/mgmt/tm/ltm/poolx")
                .unwrap()
                .is_empty()
        );
    }
}
