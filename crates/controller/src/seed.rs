//! First start: the machine id, the `admin` user, and the built-in objects every controller has
//! (`/Common/tcp`, `udp`, `http`, `clientssl` with `default.crt`/`default.key`, `serverssl`,
//! monitors `http`, `https`, `tcp`, the `device_trust_group`). Runs once per data directory.

use portcullis_admin::random_password;
use portcullis_support::new_uuid;
use serde_json::{Map, Value, json};

use super::objects::{device_group, profile, sys_file};
use portcullis_admin::MgmtResult;
use portcullis_admin::MgmtState;
use portcullis_admin::ObjName;
use portcullis_admin::Role;
use portcullis_admin::commit;
use portcullis_admin::put_user;
use portcullis_admin::{Coll, KindSpec};
use portcullis_store::Table;

fn coll(spec: &'static KindSpec) -> Coll {
    Coll {
        spec,
        path: spec.path.to_string(),
        kind_base: spec.path.trim_start_matches("/mgmt/").replace('/', ":"),
        parent: None,
    }
}

/// Seeds what is missing; returns the generated admin password if one was generated.
pub fn first_start(st: &MgmtState, admin_password: Option<String>) -> MgmtResult<Option<String>> {
    let mut generated = None;
    if st.store.get(Table::Users, "admin")?.is_none() {
        let pw = match admin_password.filter(|p| !p.is_empty()) {
            Some(p) => p,
            None => {
                let p = random_password();
                generated = Some(p.clone());
                p
            }
        };
        st.store.write(|tx| {
            put_user(
                tx,
                "admin",
                Role::Admin,
                &pw,
                &json!({"description": "Admin User"}),
            )
        })?;
    }
    if st.meta("machineId").is_none() {
        let id = new_uuid();
        st.store
            .write(|tx| tx.put(Table::Meta, "machineId", &json!(id)))?;
    }
    if st.meta("seeded").is_some() {
        remove_downloadable_key(st);
        return Ok(generated);
    }
    // default.crt / default.key: the admin certificate, so the default client-ssl profile works.
    // The objects are created from the downloads directory like any file object; the key's copy
    // there is removed as soon as the file store has its own (0600), since every resource
    // administrator may download what that directory holds.
    let dl = st.downloads_dir();
    let cert = st.cfg.data_dir.join("admin-cert.pem");
    let key = st.cfg.data_dir.join("admin-key.pem");
    let staged_key = dl.join("default.key");
    let mut files = Vec::new();
    if let (Ok(c), Ok(k)) = (std::fs::read(&cert), std::fs::read(&key)) {
        sys_file::write_durably(&dl.join("default.crt"), &c)?;
        sys_file::write_private(&staged_key, &k)?;
        files = vec![
            (&sys_file::SSL_CERT, "default.crt"),
            (&sys_file::SSL_KEY, "default.key"),
        ];
    }
    let seeded = seed_objects(st, &files);
    let _ = std::fs::remove_file(&staged_key);
    seeded?;
    Ok(generated)
}

/// Removes a copy of the admin key that an earlier version left in the downloads directory.
fn remove_downloadable_key(st: &MgmtState) {
    let staged = st.downloads_dir().join("default.key");
    let key = st.cfg.data_dir.join("admin-key.pem");
    if let (Ok(a), Ok(b)) = (std::fs::read(&staged), std::fs::read(&key))
        && a == b
    {
        let _ = std::fs::remove_file(&staged);
    }
}

/// The built-in objects, in one transaction.
fn seed_objects(st: &MgmtState, files: &[(&'static KindSpec, &str)]) -> MgmtResult<()> {
    st.store.write(|tx| {
        let mut put = |spec: &'static KindSpec, name: &str, attrs: Value| -> MgmtResult<()> {
            let c = coll(spec);
            let n = ObjName::common(name);
            let key = c.key(&n);
            if tx.get(Table::Objects, &key)?.is_some() {
                return Ok(());
            }
            let mut m = match (spec.defaults)() {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            if let Value::Object(a) = attrs {
                m.extend(a);
            }
            commit(st, tx, &c, &n, &key, m, true, "admin").map(|_| ())
        };
        for (spec, name) in files {
            put(
                spec,
                name,
                json!({"sourcePath": format!("file:{}{}", sys_file::DOWNLOADS, name)}),
            )?;
        }
        put(&profile::TCP, "tcp", json!({"defaultsFrom": "none"}))?;
        put(&profile::UDP, "udp", json!({"defaultsFrom": "none"}))?;
        put(&profile::HTTP, "http", json!({"defaultsFrom": "none"}))?;
        let ssl = if files.is_empty() {
            json!({})
        } else {
            json!({"cert": "/Common/default.crt", "key": "/Common/default.key", "chain": "none"})
        };
        put(&profile::CLIENT_SSL, "clientssl", ssl)?;
        put(&profile::SERVER_SSL, "serverssl", json!({}))?;
        put(&profile::MONITOR_HTTP, "http", json!({}))?;
        put(&profile::MONITOR_HTTPS, "https", json!({}))?;
        put(&profile::MONITOR_TCP, "tcp", json!({}))?;
        put(
            &device_group::DEVICE_GROUP,
            "device_trust_group",
            json!({"type": "sync-only"}),
        )?;
        tx.put(Table::Meta, "seeded", &json!(true))?;
        Ok::<_, portcullis_admin::MgmtError>(())
    })
}
