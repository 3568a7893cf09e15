//! `portcullis billing-report`: the utility billing report tool. It reads the
//! registration keys (`-c CSV` and/or `-k KEY[,KEY...]`), asks the local central manager over
//! HTTPS with Basic credentials what it licensed from each key, and either writes
//! `PORTCULLIS_Billing_License_Report.<YYYY-MM-DD>.json` (`-r manual`) or uploads it over TLS to the
//! configured billing endpoint (`-r automatic`, the default). `billing-report mask FILE` is the
//! companion that masks addresses and host names (see [`super::billing_mask`]).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::{ArgGroup, Args, Subcommand, ValueEnum};
use serde_json::Value;

use super::billing_build::{Inventory, build_report, report_file_name};
use super::billing_keys::{KeyListError, merge_keys, parse_key_args, parse_key_csv};
use super::billing_mask::MaskError;
use super::billing_transport::{CentralApi, TransportError, upload};
use crate::support::unix_seconds;

/// Where `portcullis central` listens by default (`central::DEFAULT_PORT`).
pub const DEFAULT_CENTRAL: &str = "https://127.0.0.1:9443";

#[derive(Args, Debug)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    group(ArgGroup::new("keys").required(true).multiple(true).args(["csv", "key"])),
    after_help = "The report format, the key file format and the upload endpoint are described in docs/licensing.md."
)]
pub struct BillingReportArgs {
    #[command(subcommand)]
    pub command: Option<BillingCommand>,
    /// File listing registration keys, one per line (CSV: the key is the first column).
    #[arg(short = 'c', value_name = "CSV")]
    pub csv: Option<PathBuf>,
    /// Registration keys, comma-separated (may be repeated).
    #[arg(short = 'k', value_name = "KEY[,KEY...]")]
    pub key: Vec<String>,
    /// `manual` writes the report file; `automatic` uploads it to the billing endpoint.
    #[arg(short = 'r', value_enum, default_value_t = Mode::Automatic)]
    pub mode: Mode,
    /// The central manager's admin API.
    #[arg(long, value_name = "URL", default_value = DEFAULT_CENTRAL)]
    pub central: String,
    /// SHA-256 fingerprint (`AA:BB:...`) of the central manager's certificate to pin. Without it
    /// the certificate is accepted unverified, and only when the central manager is on a loopback address.
    #[arg(long, value_name = "SHA256", env = "PORTCULLIS_CENTRAL_FINGERPRINT")]
    pub central_fingerprint: Option<String>,
    /// User on the central manager (the password comes from PORTCULLIS_ADMIN_PASSWORD or a prompt).
    #[arg(long, value_name = "NAME", default_value = "admin")]
    pub user: String,
    /// Directory of the report file in manual mode.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out_dir: PathBuf,
    /// The billing endpoint of automatic mode (https only).
    #[arg(long, value_name = "URL", env = "PORTCULLIS_BILLING_UPLOAD_URL")]
    pub upload_url: Option<String>,
    /// PEM certificate(s) to trust for the billing endpoint instead of the public (webpki) roots.
    #[arg(long, value_name = "PEM", env = "PORTCULLIS_BILLING_UPLOAD_CA")]
    pub upload_ca: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum BillingCommand {
    /// Replace addresses and host names of a report with consistent pseudonyms; writes
    /// `<name>.masked.json` beside FILE (or prints it with --stdout).
    Mask {
        /// The report to mask (a `PORTCULLIS_Billing_License_Report.<date>.json`).
        file: PathBuf,
        /// Print the masked report instead of writing the file.
        #[arg(long)]
        stdout: bool,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Automatic,
    Manual,
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Mode::Automatic => "automatic",
            Mode::Manual => "manual",
        }
    }
}

/// Why `billing-report` fails; `Display` is what it prints on stderr before it exits (status 1).
#[derive(Debug, thiserror::Error)]
pub enum BillingError {
    #[error("{}: {source}", .path.display())]
    KeyFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: the key file is too large", .path.display())]
    KeyFileTooLarge { path: PathBuf },
    #[error("{}: {source}", .path.display())]
    KeyCsv { path: PathBuf, source: KeyListError },
    #[error("-k: {0}")]
    KeyArgs(#[source] KeyListError),
    #[error(transparent)]
    Keys(KeyListError),
    #[error(
        "automatic mode needs a billing endpoint: set --upload-url or PORTCULLIS_BILLING_UPLOAD_URL \
         (or use -r manual to write the report file for sending by e-mail)"
    )]
    NoEndpoint,
    #[error("the billing endpoint must be an https:// URL (got {url})")]
    EndpointNotHttps { url: String },
    #[error(
        "no password: PORTCULLIS_ADMIN_PASSWORD is not set and the terminal cannot be read ({0})"
    )]
    NoPassword(#[source] std::io::Error),
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error(transparent)]
    Mask(#[from] MaskError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("{0}")]
    Json(#[from] serde_json::Error),
}

/// A report file that cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{}: no such directory", .dir.display())]
    NoDirectory { dir: PathBuf },
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Runs the tool; `Ok` is what to print on stdout, `Err` the message for stderr (exit 1).
pub fn run(args: BillingReportArgs) -> Result<String, BillingError> {
    if let Some(BillingCommand::Mask { file, stdout }) = &args.command {
        return Ok(super::billing_mask::run(file, *stdout)?);
    }
    let keys = gather_keys(args.csv.as_deref(), &args.key)?;
    // Check the upload settings before asking anything of the central manager.
    let endpoint = match args.mode {
        Mode::Manual => None,
        Mode::Automatic => Some(upload_endpoint(args.upload_url.as_deref())?),
    };
    let password = password(&args.user)?;
    let api = CentralApi::connect(
        &args.central,
        args.central_fingerprint.as_deref(),
        &args.user,
        &password,
    )?;
    let inv = inventory(&api, &args.central)?;
    let now = unix_seconds();
    let report = build_report(&keys, &inv, args.mode.as_str(), now);
    let mut out = warnings(&report);
    let text = serde_json::to_string_pretty(&report)? + "\n";
    match endpoint {
        None => {
            let path = args.out_dir.join(report_file_name(now));
            write_atomically(&path, text.as_bytes())?;
            out.push_str(&format!("billing report written to {}\n", path.display()));
        }
        Some(url) => {
            let status = upload(url, args.upload_ca.as_deref(), text.into_bytes())?;
            out.push_str(&format!("billing report uploaded to {url} ({status})\n"));
        }
    }
    Ok(out)
}

/// The keys of `-c` then `-k`, normalised, duplicates dropped.
fn gather_keys(csv: Option<&Path>, key_args: &[String]) -> Result<Vec<String>, BillingError> {
    let mut keys = Vec::new();
    if let Some(path) = csv {
        let read = |source| BillingError::KeyFile {
            path: path.to_path_buf(),
            source,
        };
        let meta = std::fs::metadata(path).map_err(read)?;
        if meta.len() > super::billing_keys::MAX_KEY_FILE_BYTES as u64 {
            return Err(BillingError::KeyFileTooLarge {
                path: path.to_path_buf(),
            });
        }
        let bytes = std::fs::read(path).map_err(read)?;
        keys = parse_key_csv(&bytes).map_err(|source| BillingError::KeyCsv {
            path: path.to_path_buf(),
            source,
        })?;
    }
    if !key_args.is_empty() {
        let more = parse_key_args(key_args).map_err(BillingError::KeyArgs)?;
        merge_keys(&mut keys, more).map_err(BillingError::Keys)?;
    }
    Ok(keys)
}

/// The automatic-mode endpoint, refused clearly when missing or not https.
fn upload_endpoint(url: Option<&str>) -> Result<&str, BillingError> {
    let url = url
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .ok_or(BillingError::NoEndpoint)?;
    if !url.to_ascii_lowercase().starts_with("https://") {
        return Err(BillingError::EndpointNotHttps {
            url: url.to_string(),
        });
    }
    Ok(url)
}

/// PORTCULLIS_ADMIN_PASSWORD, else a prompt on the terminal (no echo).
fn password(user: &str) -> Result<String, BillingError> {
    if let Ok(p) = std::env::var("PORTCULLIS_ADMIN_PASSWORD")
        && !p.is_empty()
    {
        return Ok(p);
    }
    rpassword::prompt_password(format!("Password for {user} on the central manager: "))
        .map_err(BillingError::NoPassword)
}

/// Reads the central manager's identity, pools and members.
fn inventory(api: &CentralApi, url: &str) -> Result<Inventory, TransportError> {
    let central_info = api.get_json("/mgmt/shared/identified-devices/config/device-info")?;
    let pools = items(api.get_json("/mgmt/cm/shared/licensing/pools")?);
    let mut out = Vec::with_capacity(pools.len());
    for pool in pools {
        let uuid = pool
            .get("uuid")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let members =
            items(api.get_json(&format!("/mgmt/cm/shared/licensing/pools/{uuid}/members"))?);
        out.push((pool, members));
    }
    Ok(Inventory {
        central_url: url.to_string(),
        central_info,
        pools: out,
    })
}

fn items(v: Value) -> Vec<Value> {
    match v.get("items") {
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    }
}

/// One warning line per key the central manager has no pool for.
fn warnings(report: &Value) -> String {
    let mut out = String::new();
    for k in report["registrationKeys"].as_array().into_iter().flatten() {
        if k["status"] == "NOT_FOUND" {
            out.push_str(&format!(
                "warning: no licensing pool on the central manager uses registration key {}\n",
                k["registrationKey"].as_str().unwrap_or_default()
            ));
        }
    }
    out
}

/// Writes `path` through a temporary file in the same directory and a rename, so a reader never
/// sees half a report.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(WriteError::NoDirectory {
            dir: dir.to_path_buf(),
        });
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        WriteError::Io {
            path: path.to_path_buf(),
            source: e,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        args: BillingReportArgs,
    }

    #[test]
    fn keys_are_required_unless_masking() {
        let e = Cli::try_parse_from(["billing-report", "-r", "manual"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let ok = Cli::try_parse_from(["billing-report", "-k", "A", "-r", "manual"]).unwrap();
        assert_eq!(ok.args.mode, Mode::Manual);
        let auto = Cli::try_parse_from(["billing-report", "-c", "keys.csv"]).unwrap();
        assert_eq!(auto.args.mode, Mode::Automatic);
        assert_eq!(auto.args.central, DEFAULT_CENTRAL);
        let m = Cli::try_parse_from(["billing-report", "mask", "r.json"]).unwrap();
        assert!(matches!(m.args.command, Some(BillingCommand::Mask { .. })));
        assert!(Cli::try_parse_from(["billing-report", "-r", "sometimes", "-k", "A"]).is_err());
    }

    #[test]
    fn endpoint_must_be_configured_and_https() {
        assert!(
            upload_endpoint(None)
                .unwrap_err()
                .to_string()
                .contains("PORTCULLIS_BILLING_UPLOAD_URL")
        );
        assert!(
            upload_endpoint(Some("http://x/"))
                .unwrap_err()
                .to_string()
                .contains("https://")
        );
        assert_eq!(
            upload_endpoint(Some(" https://x/r ")).ok(),
            Some("https://x/r")
        );
    }

    #[test]
    fn atomic_write_replaces_and_refuses_missing_dirs() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        write_atomically(&p, b"1").unwrap();
        write_atomically(&p, b"2").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"2");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
        assert!(matches!(
            write_atomically(&d.path().join("no/r.json"), b"1"),
            Err(WriteError::NoDirectory { .. })
        ));
    }
}
