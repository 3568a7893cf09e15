//! The `gtm distributed-app` collection: stored and listed by the generic engine, with no
//! defaults or checks of its own.

use portcullis_admin::KindSpec;

pub static DISTRIBUTED_APP: KindSpec = KindSpec {
    path: "/mgmt/tm/gtm/distributed-app",
    label: "Distributed Application",
    ..KindSpec::BASE
};
