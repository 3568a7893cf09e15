//! The `portcullis` command line: the only place that knows every module.

use clap::{Parser, Subcommand};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    Proxy(Box<portcullis::proxy::run::ProxyOptions>),
    /// The embedded demo: a demo API behind the proxy on 127.0.0.1:8080, no configuration.
    Demo,
}

/// Structured logs on stderr; `RUST_LOG` filters (default `info`).
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let _ = rustls::crypto::ring::default_provider().install_default();
    match cli.command {
        Command::Proxy(opts) => {
            init_logging();
            portcullis::proxy::run::run(*opts)
        }
        Command::Demo => {
            init_logging();
            portcullis::demo::run()
        }
        Command::Version => {
            println!("portcullis {}", env!("CARGO_PKG_VERSION"));
            std::process::ExitCode::SUCCESS
        }
    }
}
