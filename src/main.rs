//! The `portcullis` command line: the only place that knows every module.

use clap::{Parser, Subcommand};

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
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Version => {
            println!("portcullis {}", env!("CARGO_PKG_VERSION"));
            std::process::ExitCode::SUCCESS
        }
    }
}
