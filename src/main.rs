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
    /// Declarative policy tools.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
}

#[derive(Subcommand)]
enum PolicyCommand {
    /// Validate and compile a policy file; exit 1 with a precise error when it cannot be used.
    Check {
        /// The policy file (JSON or YAML).
        file: std::path::PathBuf,
        /// Accept a bare policy object without the `policy` wrapper.
        #[arg(long)]
        lenient: bool,
    },
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Version => {
            println!("portcullis {}", env!("CARGO_PKG_VERSION"));
            std::process::ExitCode::SUCCESS
        }
        Command::Policy {
            command: PolicyCommand::Check { file, lenient },
        } => {
            let (report, ok) = portcullis::cli::policy_check::run(&file, lenient);
            if ok {
                print!("{report}");
                std::process::ExitCode::SUCCESS
            } else {
                eprintln!("{report}");
                std::process::ExitCode::FAILURE
            }
        }
    }
}
