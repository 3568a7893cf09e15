//! The `portcullis` command line: the only place that knows every module.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};

#[global_allocator]
static GLOBAL: portcullis_allocator::Allocator = portcullis_allocator::Allocator;

#[derive(Parser)]
#[command(
    name = "portcullis",
    version,
    about = "WAF reverse proxy with an embedded management plane"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the version.
    Version,
    /// The standalone inline WAF proxy: one listener, one policy file.
    Proxy(Box<portcullis::proxy::ProxyOptions>),
    /// The embedded demo: a demo API behind the WAF proxy, and the admin API that runs it.
    ///
    /// No configuration: the proxy (127.0.0.1:8080) is a virtual server of a controller whose
    /// admin API (https://127.0.0.1:8443/mgmt, user admin, password in the banner) shows its
    /// policy and finds each blocked request by its support ID. The banner prints curl commands
    /// for all of it. State lives in a temporary directory, removed when the demo stops.
    Demo(portcullis::demo::DemoOptions),
    /// Run a controller: the /mgmt admin API over HTTPS, state in a data directory.
    Serve(ServeCmd),
    /// Run a central manager: the /mgmt/cm task API managing controllers over their REST API.
    Central(CentralCmd),
    /// The utility billing report: per registration key, the devices the central manager
    /// licensed from it; written to a file (`-r manual`) or uploaded (`-r automatic`).
    BillingReport(Box<portcullis::cli::BillingReportArgs>),
    /// Run a corpus of recorded requests (JSON lines) through the engine in-process, as the proxy
    /// would take them, and report block rates, false alarms, misses and time per request.
    Replay(Box<portcullis::cli::ReplayArgs>),
    /// Declarative policy tools.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// API access-control profile tools (docs/access.md).
    Access {
        #[command(subcommand)]
        command: AccessCommand,
    },
}

#[derive(Subcommand)]
enum AccessCommand {
    /// Validate an access profile file; exit 1 with the field named when it cannot be used.
    Check {
        /// The profile (JSON or YAML).
        file: PathBuf,
    },
    /// Read a password from stdin and print its argon2id hash (for Basic users).
    HashPassword,
    /// Revoke an API key (`key:<key id>`) or a token (`jti:<jti>`) on every node sharing the
    /// store; they refuse it within a second.
    Revoke {
        #[command(flatten)]
        store: portcullis::proxy::access::RevocationStoreArgs,
        /// How long: seconds, or N with s, m, h or d (default: no end).
        #[arg(long, value_parser = portcullis::proxy::access::parse_revocation_ttl)]
        ttl: Option<std::time::Duration>,
        /// `key:<API key id>` or `jti:<token id>`.
        id: String,
    },
    /// End a revocation.
    Unrevoke {
        #[command(flatten)]
        store: portcullis::proxy::access::RevocationStoreArgs,
        id: String,
    },
    /// List the revocations in force.
    Revocations {
        #[command(flatten)]
        store: portcullis::proxy::access::RevocationStoreArgs,
    },
}

#[derive(Subcommand)]
enum PolicyCommand {
    /// Validate and compile a policy file; exit 1 with a precise error when it cannot be used.
    Check {
        /// The policy file (JSON or YAML).
        file: PathBuf,
        /// Accept a bare policy object without the `policy` wrapper.
        #[arg(long)]
        lenient: bool,
        /// Also print the URL table (method, URL, parameters, content types) of the OpenAPI spec.
        #[arg(long)]
        urls: bool,
        /// The command the policy is checked for: it decides where file links may point.
        #[arg(long = "for", value_name = "COMMAND", value_enum, default_value_t)]
        target: portcullis::cli::CheckFor,
    },
}

/// Where `serve` listens by default (and the demo's admin API).
const SERVE_ADMIN: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 8443);
/// Where `central` listens by default: not `serve`'s port, so both run side by side.
const CENTRAL_ADMIN: SocketAddr = SocketAddr::new(
    IpAddr::V4(Ipv4Addr::LOCALHOST),
    portcullis::central::DEFAULT_PORT,
);

/// Where a server command (`serve`, `central`) takes its settings from.
#[derive(clap::Args)]
struct ServerFiles {
    /// JSON configuration file (flags override it).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Data directory (store, certificate; a controller's uploaded files)
    /// [default: ./portcullis-data].
    #[arg(long)]
    data_dir: Option<PathBuf>,
}

#[derive(clap::Args)]
struct ServeCmd {
    #[command(flatten)]
    files: ServerFiles,
    /// Address of the HTTPS admin API [default: 127.0.0.1:8443].
    #[arg(long)]
    admin_listen: Option<SocketAddr>,
    /// Address of the DNS listener (UDP and TCP).
    #[arg(long)]
    dns_listen: Option<SocketAddr>,
}

#[derive(clap::Args)]
struct CentralCmd {
    #[command(flatten)]
    files: ServerFiles,
    /// Address of the HTTPS admin API [default: 127.0.0.1:9443].
    #[arg(long)]
    admin_listen: Option<SocketAddr>,
    /// Keep the fleet's security events in PostgreSQL (postgres://user:password@host/db)
    /// instead of the embedded store.
    #[arg(long)]
    events_db: Option<String>,
}

/// The multi-threaded runtime a server command runs on.
fn server_runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
}

fn central(cmd: CentralCmd) -> Result<(), String> {
    use portcullis::central::CentralConfig;
    let mut file = match &cmd.files.config {
        Some(p) => CentralConfig::load(p).map_err(|e| e.to_string())?,
        None => CentralConfig::default(),
    };
    if let Some(db) = cmd.events_db {
        file.central.events.db = Some(db);
    }
    let mut mgmt = file.mgmt_config().map_err(|e| e.to_string())?;
    if let Some(d) = cmd.files.data_dir.or(file.data_dir.clone()) {
        mgmt.data_dir = d;
    }
    let args = portcullis::central::CentralArgs {
        admin_listen: cmd
            .admin_listen
            .or(file.admin_listen)
            .unwrap_or(CENTRAL_ADMIN),
        tls_cert: file.tls_cert.clone(),
        tls_key: file.tls_key.clone(),
        mgmt,
        limits: file.central.limits(),
        max_tasks: file.central.max_tasks,
        events: file.central.events.clone(),
    };
    let rt = server_runtime()?;
    rt.block_on(run_central(args))
}

/// Runs the central manager until SIGINT/SIGTERM: a controller's admin server with no data plane
/// (`mgmt::run_admin_server`: TLS, admin user from `PORTCULLIS_ADMIN_PASSWORD`, the
/// `admin API listening on` line) with the central routes and the fleet event store installed.
async fn run_central(args: portcullis::central::CentralArgs) -> Result<(), String> {
    let serve = portcullis::mgmt::ServeArgs {
        admin_listen: args.admin_listen,
        dns_listen: None,
        tls_cert: args.tls_cert,
        tls_key: args.tls_key,
        mgmt: args.mgmt,
    };
    let (limits, max_tasks, fleet_events) = (args.limits, args.max_tasks, args.events);
    portcullis::mgmt::run_admin_server(
        serve,
        std::sync::Arc::new(portcullis::mgmt::DetachedTopology),
        Box::new(move |st, _| {
            Box::pin(async move {
                portcullis::central::install_with(&st, limits, max_tasks).map_err(|e| e.message)?;
                portcullis::central::events::install(&st, fleet_events)
                    .await
                    .map_err(|e| format!("fleet event store: {e}"))?;
                println!("portcullis: central manager ready");
                Ok(axum::Router::new())
            })
        }),
    )
    .await
    .map_err(|e| e.to_string())
}

/// Diagnostic logs on stderr (`RUST_LOG` filters, default `info`), coloured only when stderr is
/// a terminal. Security events are not among them: they are JSON lines on stdout or in the
/// event log file (`proxy::events`).
fn init_logging() {
    use std::io::IsTerminal as _;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

fn serve(cmd: ServeCmd) -> Result<(), String> {
    let file = match &cmd.files.config {
        Some(p) => portcullis::mgmt::ServeConfig::load(p).map_err(|e| e.to_string())?,
        None => Default::default(),
    };
    let mut mgmt = file.mgmt.unwrap_or_default();
    if let Some(d) = cmd.files.data_dir.or(file.data_dir) {
        mgmt.data_dir = d;
    }
    let args = portcullis::mgmt::ServeArgs {
        admin_listen: cmd
            .admin_listen
            .or(file.admin_listen)
            .unwrap_or(SERVE_ADMIN),
        dns_listen: cmd.dns_listen.or(file.dns_listen),
        tls_cert: file.tls_cert,
        tls_key: file.tls_key,
        mgmt,
    };
    let rt = server_runtime()?;
    rt.block_on(async {
        let shared =
            portcullis::proxy::DataplaneShared::with_defaults(None).map_err(|e| e.to_string())?;
        let topology = Arc::new(portcullis::proxy::Dataplane::new(shared.clone()));
        let attach: portcullis::mgmt::Attach = Box::new(move |st, dns_listen| {
            // Request events reach the store and the security log profiles' destinations.
            let events = portcullis::mgmt::events::install(&st, &shared.events)
                .map(|_| ())
                .map_err(|e| format!("event consumers: {e}"));
            Box::pin(async move {
                events?;
                soap_and_dns(st, dns_listen).await
            })
        });
        portcullis::mgmt::run_admin_server(args, topology, attach)
            .await
            .map_err(|e| e.to_string())
    })
}

/// Mounts the SOAP portal on the admin API (users and roles of the /mgmt user store, the admin
/// port's body bounds) and starts the DNS listener serving the same zones, when `--dns-listen`
/// is given.
fn soap_and_dns(
    st: Arc<portcullis::admin::MgmtState>,
    dns_listen: Option<SocketAddr>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<axum::Router, String>> + Send>> {
    Box::pin(async move {
        use portcullis::{dns, soap};
        let zones = dns::ZoneCatalog::load(&st.store).map_err(|e| e.to_string())?;
        if let Some(addr) = dns_listen {
            let server = dns::DnsServer::bind(addr)
                .await
                .map_err(|e| format!("DNS listener {addr}: {e}"))?;
            let local = server.local_addr().map_err(|e| e.to_string())?;
            println!("portcullis: DNS listener on {local} (UDP and TCP)");
            portcullis::support::task::spawn(server.run(zones.clone(), std::future::pending()));
        }
        let users = st.clone();
        let auth: soap::Authenticator = Arc::new(move |user, pass, peer| {
            let u = users.check_password(user, pass, peer).ok()?;
            Some(if portcullis::admin::may_change_zones(u.role) {
                soap::Access::ReadWrite
            } else {
                soap::Access::Read
            })
        });
        let mut portal = soap::SoapState::new(st.store.clone(), zones, auth);
        portal.limits = st.cfg.body_limits(soap::MAX_BODY);
        Ok(soap::router(portal))
    })
}

fn exit_with(what: &str, r: Result<(), String>) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("portcullis {what}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Prints a command's output, or its error on stderr with exit status 1.
fn print_or_fail(r: Result<String, impl std::fmt::Display>) -> ExitCode {
    match r {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("portcullis: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    portcullis_allocator::tune();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cli = Cli::parse();
    match cli.command {
        Command::Version => {
            println!("portcullis {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Command::Proxy(opts) => {
            init_logging();
            portcullis::proxy::run_proxy(*opts, || {
                portcullis_allocator::hand_back();
                portcullis_allocator::release_start_pages();
            })
        }
        Command::Demo(opts) => {
            init_logging();
            portcullis::demo::run(opts)
        }
        Command::Serve(cmd) => {
            init_logging();
            exit_with("serve", serve(cmd))
        }
        Command::Access {
            command: AccessCommand::Check { file },
        } => match portcullis::proxy::access::profile_summary(&file) {
            Ok(s) => {
                print!("{s}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        },
        Command::Access {
            command: AccessCommand::Revoke { store, ttl, id },
        } => print_or_fail(portcullis::proxy::access::revoke_cli(&store, &id, ttl)),
        Command::Access {
            command: AccessCommand::Unrevoke { store, id },
        } => print_or_fail(portcullis::proxy::access::unrevoke_cli(&store, &id)),
        Command::Access {
            command: AccessCommand::Revocations { store },
        } => print_or_fail(portcullis::proxy::access::list_revoked_cli(&store)),
        Command::Access {
            command: AccessCommand::HashPassword,
        } => {
            let mut line = String::new();
            let _ = std::io::stdin().read_line(&mut line);
            let password = line.trim_end_matches(['\r', '\n']);
            match portcullis::admin::hash_password(password) {
                Ok(h) => {
                    println!("{h}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("portcullis: {}", e.message);
                    ExitCode::FAILURE
                }
            }
        }
        Command::Central(cmd) => {
            init_logging();
            exit_with("central", central(cmd))
        }
        Command::BillingReport(args) => match portcullis::cli::run_billing_report(*args) {
            Ok(out) => {
                print!("{out}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("portcullis billing-report: {e}");
                ExitCode::FAILURE
            }
        },
        Command::Replay(args) => match portcullis::cli::run_replay(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("portcullis replay: {e}");
                ExitCode::FAILURE
            }
        },
        Command::Policy {
            command:
                PolicyCommand::Check {
                    file,
                    lenient,
                    urls,
                    target,
                },
        } => {
            let opts = portcullis::cli::CheckOptions {
                lenient,
                urls,
                target,
            };
            let (report, ok) = portcullis::cli::check_policy_with(&file, opts);
            if ok {
                print!("{report}");
                ExitCode::SUCCESS
            } else {
                eprintln!("{report}");
                ExitCode::FAILURE
            }
        }
    }
}
