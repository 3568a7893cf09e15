//! One file per `/mgmt` object kind or surface. `REGISTRY` lists the kinds served by the
//! generic engine; `ROUTES` the fixed endpoints with their own handlers (checked first).

pub(crate) mod api_access;
mod auth_user;
mod commands;
mod data_group;
pub(crate) mod device_group;
mod distributed_app;
pub(crate) mod download;
mod index;
pub(crate) mod pool;
pub(crate) mod profile;
pub(crate) mod rule;
mod security_log;
mod sys;
pub(crate) mod sys_file;
pub(crate) mod tokens;
pub(crate) mod transaction;
mod upload;
pub(crate) mod virtual_server;

use portcullis_admin::KindSpec;
use portcullis_admin::Route;

/// Every kind served by the generic engine.
pub static REGISTRY: &[&KindSpec] = &[
    &pool::POOL,
    &pool::NODE,
    &virtual_server::VIRTUAL,
    &virtual_server::VIRTUAL_ADDRESS,
    &profile::TCP,
    &profile::UDP,
    &profile::HTTP,
    &profile::CLIENT_SSL,
    &profile::SERVER_SSL,
    &api_access::API_ACCESS,
    &profile::MONITOR_HTTP,
    &profile::MONITOR_HTTPS,
    &profile::MONITOR_TCP,
    &rule::RULE,
    &data_group::INTERNAL,
    &sys_file::IFILE,
    &sys_file::SSL_CERT,
    &sys_file::SSL_KEY,
    &device_group::DEVICE_GROUP,
    &distributed_app::DISTRIBUTED_APP,
    &security_log::LOG_PROFILE,
];

/// Fixed endpoints, matched before the registry.
pub static ROUTES: &[Route] = &[
    Route {
        path: "/mgmt",
        prefix: false,
        handler: index::handle,
    },
    Route {
        path: crate::revocations::PATH,
        prefix: true,
        handler: crate::revocations::handle,
    },
    Route {
        path: crate::events::feed::PATH,
        prefix: true,
        handler: crate::events::feed::handle,
    },
    Route {
        path: crate::events::delivery::PATH,
        prefix: true,
        handler: crate::events::delivery::handle,
    },
    Route {
        path: crate::events::rest::PATH,
        prefix: true,
        handler: crate::events::rest::handle,
    },
    Route {
        path: "/mgmt/shared/authz/tokens",
        prefix: true,
        handler: tokens::handle,
    },
    Route {
        path: "/mgmt/shared/echo-query",
        prefix: false,
        handler: sys::echo,
    },
    Route {
        path: "/mgmt/shared/identified-devices/config/device-info",
        prefix: false,
        handler: sys::device_info,
    },
    Route {
        path: "/mgmt/shared/file-transfer/uploads",
        prefix: true,
        handler: upload::handle,
    },
    Route {
        path: "/mgmt/shared/file-transfer/ucs-uploads",
        prefix: true,
        handler: upload::handle,
    },
    Route {
        path: "/mgmt/tm/asm/file-transfer/uploads",
        prefix: true,
        handler: upload::handle,
    },
    Route {
        path: "/mgmt/tm/sys",
        prefix: false,
        handler: sys::sys_root,
    },
    Route {
        path: "/mgmt/tm/sys/version",
        prefix: false,
        handler: sys::version,
    },
    Route {
        path: "/mgmt/tm/sys/provision",
        prefix: true,
        handler: sys::provision,
    },
    Route {
        path: "/mgmt/tm/sys/license",
        prefix: false,
        handler: sys::license,
    },
    Route {
        path: "/mgmt/tm/sys/crypto/cert",
        prefix: false,
        handler: sys_file::crypto_install,
    },
    Route {
        path: "/mgmt/tm/sys/crypto/key",
        prefix: false,
        handler: sys_file::crypto_install,
    },
    Route {
        path: "/mgmt/tm/auth/user",
        prefix: true,
        handler: auth_user::handle,
    },
    Route {
        path: "/mgmt/shared/file-transfer/downloads",
        prefix: true,
        handler: download::handle,
    },
    Route {
        path: "/mgmt/tm/transaction",
        prefix: true,
        handler: transaction::handle,
    },
    Route {
        path: "/mgmt/tm/util/bash",
        prefix: false,
        handler: commands::bash,
    },
    Route {
        path: "/mgmt/tm",
        prefix: false,
        handler: commands::tm_command,
    },
];
