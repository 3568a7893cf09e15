//! A standalone iControl SOAP portal + DNS listener, for client tests (bigsuds, dig) until
//! `portcullis serve` hosts both. Prints one JSON line with the bound addresses, then serves
//! until stdin closes or Ctrl-C.
//!
//! ```text
//! cargo run --example soap_server -- --listen 127.0.0.1:0 --dns-listen 127.0.0.1:0
//! {"https":"127.0.0.1:40123","dns":"127.0.0.1:40124","user":"admin"}
//! ```

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Parser;
use portcullis::dns::{DnsServer, ZoneCatalog};
use portcullis::soap::{self, SoapState};
use portcullis::store::Store;
use std::io::Read as _;

#[derive(Parser)]
struct Args {
    /// HTTPS address of the SOAP portal.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// UDP + TCP address of the DNS listener.
    #[arg(long, default_value = "127.0.0.1:0")]
    dns_listen: SocketAddr,
    /// Data directory of the store (a temporary one when absent).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    #[arg(long, default_value = "admin")]
    user: String,
    #[arg(long, default_value = "admin")]
    password: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let tmp = tempfile::tempdir()?;
    let dir = args
        .data_dir
        .clone()
        .unwrap_or_else(|| tmp.path().to_path_buf());
    let store = Arc::new(Store::open(&dir)?);
    let zones = ZoneCatalog::load(&store)?;
    let (user, password) = (args.user.clone(), args.password.clone());
    let auth: soap::Authenticator =
        Arc::new(move |u, p, _| (u == user && p == password).then_some(soap::Access::ReadWrite));
    let state = SoapState::new(store, zones.clone(), auth);

    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    let dns = DnsServer::bind(args.dns_listen).await?;
    let (tls, _) = soap::self_signed_tls(&["localhost", "127.0.0.1"])?;
    println!(
        "{{\"https\":\"{}\",\"dns\":\"{}\",\"user\":\"{}\"}}",
        listener.local_addr()?,
        dns.local_addr()?,
        args.user
    );
    std::io::stdout().flush()?;

    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let wait = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|v| *v).await;
    };
    let https = tokio::spawn(soap::serve_https(
        listener,
        tls,
        soap::router(state),
        wait(stop_rx.clone()),
    ));
    let dns = tokio::spawn(dns.run(zones, wait(stop_rx)));
    // stdin closing (the test harness exiting) stops the server
    let (eof_tx, eof_rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 64];
        let mut stdin = std::io::stdin();
        while let Ok(n) = stdin.read(&mut buf) {
            if n == 0 {
                break;
            }
        }
        let _ = eof_tx.send(());
    });
    let stdin_closed = eof_rx;
    tokio::select! {
        _ = stdin_closed => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    let _ = stop_tx.send(true);
    let _ = https.await;
    let _ = dns.await;
    Ok(())
}
