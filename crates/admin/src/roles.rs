//! Authorization: the role matrix (documented in docs/mgmt.md) and the exact 401 clients match on.

use http::{Method, StatusCode};

use super::error::MgmtError;

/// The roles of a local user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Admin,
    ResourceAdmin,
    Manager,
    Operator,
    Guest,
}

impl Role {
    /// Accepts the REST names (`admin`, `resource-admin`, ...) and the long forms.
    pub fn parse(s: &str) -> Option<Role> {
        Some(
            match s.to_ascii_lowercase().replace(['_', ' '], "-").as_str() {
                "admin" | "administrator" => Role::Admin,
                "resource-admin" | "resource-administrator" => Role::ResourceAdmin,
                "manager" => Role::Manager,
                "operator" => Role::Operator,
                "guest" => Role::Guest,
                _ => return None,
            },
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::ResourceAdmin => "resource-admin",
            Role::Manager => "manager",
            Role::Operator => "operator",
            Role::Guest => "guest",
        }
    }
}

/// Paths a manager may change: application objects, not the system.
const MANAGER_WRITABLE: &[&str] = &["/mgmt/tm/ltm/", "/mgmt/tm/gtm/"];

/// Whether `role` may use `method` on `path` (the path has no trailing slash). Self-service
/// (a user's own token, own password) is decided by the handlers, which are reachable by all roles.
pub fn allowed(role: Role, user: &str, method: &Method, path: &str) -> bool {
    let read = matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
    let under = |p: &str| path == p || path.starts_with(&format!("{p}/"));
    // Reachable by everyone; the handler checks ownership.
    if under("/mgmt/shared/authz/tokens") || path == "/mgmt/shared/authn/login" {
        return true;
    }
    if path == format!("/mgmt/tm/auth/user/{user}") && (read || *method == Method::PATCH) {
        return true;
    }
    // Commands: administrators only (a resource administrator gets the 401 too).
    if path == "/mgmt/tm" || under("/mgmt/tm/util") {
        return role == Role::Admin;
    }
    if read {
        return !under("/mgmt/tm/auth") || matches!(role, Role::Admin | Role::ResourceAdmin);
    }
    match role {
        Role::Admin => true,
        Role::ResourceAdmin => !under("/mgmt/tm/auth") && !under("/mgmt/tm/sys/license"),
        Role::Manager => MANAGER_WRITABLE.iter().any(|p| path.starts_with(p)),
        Role::Operator => {
            *method == Method::PATCH
                && path.starts_with("/mgmt/tm/ltm/")
                && (path.contains("/members/") || path.starts_with("/mgmt/tm/ltm/node/"))
        }
        Role::Guest => false,
    }
}

/// The REST resource the SOAP portal's zone changes count as: zone files are system
/// configuration, so the roles that may change `sys` objects (administrator, resource
/// administrator) may change zones; every role may read them.
const SOAP_ZONES: &str = "/mgmt/tm/sys/dns/zone";

/// Whether `role` may call the SOAP methods that change zones and records (reads: every role).
pub fn may_change_zones(role: Role) -> bool {
    allowed(role, "", &Method::POST, SOAP_ZONES)
}

/// Operators may only enable/disable members and nodes: a PATCH body with any other property
/// (on an ltm path) is refused like a missing right. Other roles and paths are unaffected.
pub fn operator_body_ok(role: Role, path: &str, body: &[u8]) -> bool {
    if role != Role::Operator || !path.starts_with("/mgmt/tm/ltm/") {
        return true;
    }
    const ALLOWED: &[&str] = &[
        "session",
        "state",
        "name",
        "partition",
        "fullPath",
        "kind",
        "selfLink",
        "generation",
    ];
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(serde_json::Value::Object(m)) => m.keys().all(|k| ALLOWED.contains(&k.as_str())),
        _ => true,
    }
}

/// The 401 for an authenticated user lacking rights (`Authorization failed: user=...`).
pub fn denied(user: &str, method: &Method, path: &str, peer: &str) -> MgmtError {
    let resource = path.strip_prefix("/mgmt").unwrap_or(path);
    MgmtError::new(
        StatusCode::UNAUTHORIZED,
        format!(
            "Authorization failed: user=https://localhost/mgmt/shared/authz/users/{user} resource={resource} verb={method} uri:http://localhost:8100{path} referrer:{peer} sender:{peer}"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix() {
        let pool = "/mgmt/tm/ltm/pool";
        assert!(allowed(Role::Admin, "a", &Method::POST, "/mgmt/tm"));
        assert!(!allowed(
            Role::ResourceAdmin,
            "r",
            &Method::POST,
            "/mgmt/tm"
        ));
        assert!(allowed(Role::ResourceAdmin, "r", &Method::POST, pool));
        assert!(allowed(Role::Manager, "m", &Method::POST, pool));
        assert!(!allowed(
            Role::Manager,
            "m",
            &Method::POST,
            "/mgmt/tm/sys/file/ifile"
        ));
        assert!(!allowed(Role::Operator, "o", &Method::POST, pool));
        assert!(allowed(
            Role::Operator,
            "o",
            &Method::PATCH,
            "/mgmt/tm/ltm/pool/~Common~p/members/~Common~a:80"
        ));
        assert!(allowed(Role::Guest, "g", &Method::GET, pool));
        assert!(!allowed(Role::Guest, "g", &Method::DELETE, pool));
        assert!(!allowed(
            Role::Guest,
            "g",
            &Method::GET,
            "/mgmt/tm/auth/user"
        ));
        assert!(allowed(
            Role::Guest,
            "g",
            &Method::PATCH,
            "/mgmt/tm/auth/user/g"
        ));
        assert!(!allowed(
            Role::Manager,
            "m",
            &Method::POST,
            "/mgmt/tm/auth/user"
        ));
        assert!(!allowed(
            Role::Operator,
            "o",
            &Method::POST,
            "/mgmt/tm/util/bash"
        ));
    }

    #[test]
    fn zone_changes_follow_the_sys_column() {
        assert!(may_change_zones(Role::Admin));
        assert!(may_change_zones(Role::ResourceAdmin));
        for r in [Role::Manager, Role::Operator, Role::Guest] {
            assert!(!may_change_zones(r), "{r:?}");
        }
    }

    #[test]
    fn denial_message_is_part7() {
        let e = denied("bob", &Method::POST, "/mgmt/tm", "10.0.0.9");
        assert_eq!(e.status, 401);
        assert_eq!(
            e.message,
            "Authorization failed: user=https://localhost/mgmt/shared/authz/users/bob resource=/tm verb=POST uri:http://localhost:8100/mgmt/tm referrer:10.0.0.9 sender:10.0.0.9"
        );
    }
}
