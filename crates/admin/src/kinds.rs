//! The table-driven registry of object kinds and the resolution of a request path to a
//! collection or an object of one kind (`/mgmt/tm/ltm/pool`, `.../~Common~p`,
//! `.../~Common~p/members`, `.../~Common~p/members/~Common~10.0.0.1:80`).
//! Each kind is one `KindSpec` declared in its own file under `objects/`; the generic engine
//! (`engine.rs`) does the rest.

use serde_json::{Map, Value};

use super::error::{MgmtError, MgmtResult};
use super::names::{ObjName, check_name};
use super::state::MgmtState;
use portcullis_store::WriteTx;

/// Validates and normalises the new state of an object inside its write transaction.
pub type PrepareFn = fn(&mut PendingWrite<'_, '_>) -> MgmtResult<()>;
/// Custom PATCH semantics (e.g. data-group `?options=records add`); returns the merged object.
pub type PatchFn = fn(
    &PendingWrite<'_, '_>,
    &Map<String, Value>,
    Option<&str>,
) -> MgmtResult<Option<Map<String, Value>>>;
/// Refuses a delete (object in use) with the error to send.
pub type DeleteFn = fn(&MgmtState, &WriteTx<'_>, &ObjName) -> MgmtResult<()>;
/// Adds computed fields on the way out (status, references).
pub type DecorateFn = fn(&MgmtState, &mut Map<String, Value>);

/// One object kind.
pub struct KindSpec {
    /// Collection path (`/mgmt/tm/ltm/pool`), or the sub-collection name (`members`) for subs.
    pub path: &'static str,
    /// Human label used in the real error messages (`Pool`).
    pub label: &'static str,
    /// `~Partition~name` addressing (false: bare names, e.g. users).
    pub partitioned: bool,
    pub subs: &'static [&'static KindSpec],
    pub defaults: fn() -> Value,
    pub prepare: PrepareFn,
    pub patch: Option<PatchFn>,
    pub before_delete: DeleteFn,
    pub decorate: DecorateFn,
    /// PATCH/PUT on the collection path is refused with this 403 message (apiError 1).
    pub collection_write: Option<&'static str>,
    /// Changes re-apply the data-plane topology.
    pub data_plane: bool,
}

fn no_defaults() -> Value {
    Value::Object(Map::new())
}
fn no_prepare(_: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    Ok(())
}
fn no_delete_check(_: &MgmtState, _: &WriteTx<'_>, _: &ObjName) -> MgmtResult<()> {
    Ok(())
}
fn no_decorate(_: &MgmtState, _: &mut Map<String, Value>) {}

impl KindSpec {
    /// The neutral spec every kind starts from (`..KindSpec::BASE`).
    pub const BASE: KindSpec = KindSpec {
        path: "",
        label: "object",
        partitioned: true,
        subs: &[],
        defaults: no_defaults,
        prepare: no_prepare,
        patch: None,
        before_delete: no_delete_check,
        decorate: no_decorate,
        collection_write: None,
        data_plane: false,
    };
}

/// An object about to be written, inside its write transaction: what `prepare` and `patch` see.
pub struct PendingWrite<'a, 'b> {
    pub st: &'a MgmtState,
    pub tx: &'a mut WriteTx<'b>,
    pub obj: &'a mut Map<String, Value>,
    pub name: &'a ObjName,
    /// The authenticated user making the change.
    pub user: &'a str,
    /// Store key of the object (`/mgmt/tm/ltm/pool/~Common~p`).
    pub key: &'a str,
    pub parent: Option<&'a ParentRef>,
    /// True for POST, false for PUT/PATCH.
    pub created: bool,
}

/// The parent of a sub-collection.
#[derive(Clone)]
pub struct ParentRef {
    pub spec: &'static KindSpec,
    pub key: String,
    pub name: ObjName,
}

/// A resolved collection.
#[derive(Clone)]
pub struct Coll {
    pub spec: &'static KindSpec,
    /// Canonical collection path (also the store-key prefix).
    pub path: String,
    /// `tm:ltm:pool` (`tm:ltm:pool:members` for a sub-collection).
    pub kind_base: String,
    pub parent: Option<ParentRef>,
}

impl Coll {
    fn last(&self) -> &str {
        self.kind_base.rsplit(':').next().unwrap_or_default()
    }
    pub fn item_kind(&self) -> String {
        format!("{}:{}state", self.kind_base, self.last())
    }
    pub fn collection_kind(&self) -> String {
        format!("{}:{}collectionstate", self.kind_base, self.last())
    }
    pub fn key(&self, name: &ObjName) -> String {
        format!("{}/{}", self.path, self.segment(name))
    }
    pub fn segment(&self, name: &ObjName) -> String {
        if self.spec.partitioned {
            name.tilde()
        } else {
            name.name.clone()
        }
    }
    /// Parses an object segment of this collection.
    pub fn name_of(&self, seg: &str) -> MgmtResult<ObjName> {
        if self.spec.partitioned {
            ObjName::from_segment(seg)
        } else {
            check_name(seg)?;
            Ok(ObjName {
                partition: String::new(),
                sub_path: None,
                name: seg.to_string(),
            })
        }
    }
    /// The full path shown in messages and `fullPath`.
    pub fn full_path(&self, name: &ObjName) -> String {
        if self.spec.partitioned {
            name.full_path()
        } else {
            name.name.clone()
        }
    }
}

/// A request path resolved against the registry.
pub enum Target {
    Collection(Coll),
    Object(Coll, ObjName),
    /// `<object>/stats`.
    Stats(Coll, ObjName),
}

/// Resolves a percent-decoded path (segments, no trailing slash) against the registry and the
/// kinds other modules registered (`MgmtState::extend`).
pub fn resolve(st: &MgmtState, segs: &[String]) -> MgmtResult<Option<Target>> {
    let path = format!("/{}", segs.join("/"));
    let extra = st.extensions.read().kinds.clone();
    let best = st
        .builtins
        .kinds
        .iter()
        .chain(extra.iter())
        .filter(|s| path == s.path || path.starts_with(&format!("{}/", s.path)))
        .max_by_key(|s| s.path.len());
    let Some(spec) = best else { return Ok(None) };
    let depth = spec.path.split('/').count() - 1;
    let rest = &segs[depth..];
    let coll = Coll {
        spec,
        path: spec.path.to_string(),
        kind_base: spec.path.trim_start_matches("/mgmt/").replace('/', ":"),
        parent: None,
    };
    Ok(Some(match rest {
        [] => Target::Collection(coll),
        [obj] => {
            let n = coll.name_of(obj)?;
            Target::Object(coll, n)
        }
        [obj, stats] if stats == "stats" => {
            let n = coll.name_of(obj)?;
            Target::Stats(coll, n)
        }
        [obj, sub, tail @ ..] if tail.len() <= 1 => {
            let Some(sub_spec) = spec.subs.iter().find(|s| s.path == sub) else {
                return Ok(None);
            };
            let pname = coll.name_of(obj)?;
            let pkey = coll.key(&pname);
            let sub_coll = Coll {
                spec: sub_spec,
                path: format!("{pkey}/{sub}"),
                kind_base: format!("{}:{sub}", coll.kind_base),
                parent: Some(ParentRef {
                    spec,
                    key: pkey,
                    name: pname,
                }),
            };
            match tail {
                [] => Target::Collection(sub_coll),
                [o] => {
                    let n = sub_coll.name_of(o)?;
                    Target::Object(sub_coll, n)
                }
                _ => return Ok(None),
            }
        }
        _ => return Ok(None),
    }))
}

/// A JSON string field or a 400 naming it.
pub fn str_field<'a>(obj: &'a Map<String, Value>, key: &str) -> MgmtResult<Option<&'a str>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(MgmtError::bad_request(format!(
            "The value of property '{key}' must be a string."
        ))),
    }
}
