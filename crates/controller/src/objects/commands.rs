//! Commands: `/mgmt/tm/util/bash` (GET is a 403 as on the real system; POST runs `bash -c` only when
//! `util_bash` is enabled in the configuration, for administrators, with a time limit) and
//! `POST /mgmt/tm` (`show sys version`, a tmsh-like `list <module> <kind> [name]`).

use std::io::Read as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use http::{Method, StatusCode};
use serde_json::{Value, json};

use portcullis_admin::Ctx;
use portcullis_admin::Reply;
use portcullis_admin::children;
use portcullis_admin::parse_object;
use portcullis_admin::str_field;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_admin::{Role, denied};

/// How long a bash command may run.
const BASH_TIMEOUT: Duration = Duration::from_secs(30);
/// How much of its output is returned.
const MAX_OUTPUT: usize = 1024 * 1024;

pub fn bash(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    if ctx.method != Method::POST {
        return Err(MgmtError::new(
            StatusCode::FORBIDDEN,
            "Operation is not allowed on component /util/bash.",
        ));
    }
    if ctx.user.role != Role::Admin {
        return Err(denied(&ctx.user.name, &ctx.method, &ctx.path, &ctx.peer));
    }
    let b = parse_object(body)?;
    if str_field(&b, "command")? != Some("run") {
        return Err(MgmtError::bad_request("The bash command must be 'run'."));
    }
    let args = str_field(&b, "utilCmdArgs")?
        .ok_or_else(|| MgmtError::bad_request("utilCmdArgs is required (\"-c '<command>'\")."))?;
    if !ctx.st.cfg.util_bash {
        return Err(MgmtError::new(
            StatusCode::FORBIDDEN,
            "Operation is not allowed on component /util/bash: command execution is disabled (set util_bash in the configuration).",
        ));
    }
    let script = args
        .trim()
        .strip_prefix("-c")
        .map(str::trim)
        .map(|s| {
            s.strip_prefix('\'')
                .and_then(|s| s.strip_suffix('\''))
                .unwrap_or(s)
        })
        .ok_or_else(|| MgmtError::bad_request("utilCmdArgs must be \"-c '<command>'\"."))?;
    let out = run_bounded(script)?;
    Ok(Reply::json(json!({
        "kind": "tm:util:bash:runstate",
        "command": "run",
        "utilCmdArgs": args,
        "commandResult": out,
    })))
}

fn run_bounded(script: &str) -> MgmtResult<String> {
    let io = |e: std::io::Error| MgmtError::internal(format!("bash: {e}"));
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io)?;
    let start = Instant::now();
    loop {
        if child.try_wait().map_err(io)?.is_some() {
            break;
        }
        if start.elapsed() > BASH_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(MgmtError::bad_request(format!(
                "The command ran longer than {} s and was stopped.",
                BASH_TIMEOUT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut s = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.by_ref().take(MAX_OUTPUT as u64).read_to_string(&mut s);
    }
    if let Some(mut e) = child.stderr.take() {
        let _ = e.by_ref().take(MAX_OUTPUT as u64).read_to_string(&mut s);
    }
    Ok(s)
}

/// `POST /mgmt/tm {command: show|run|list, utilCmdArgs}`.
pub fn tm_command(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    if ctx.method != Method::POST {
        return Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        ));
    }
    let b = parse_object(body)?;
    let command = str_field(&b, "command")?
        .ok_or_else(|| MgmtError::bad_request("command is required (show, run or list)."))?;
    let args = str_field(&b, "utilCmdArgs")?
        .unwrap_or("")
        .trim()
        .to_string();
    let args = args
        .strip_prefix("-c")
        .map(str::trim)
        .unwrap_or(&args)
        .trim_matches('\'')
        .trim()
        .to_string();
    let words: Vec<&str> = args.split_whitespace().collect();
    let result = match (command, words.as_slice()) {
        ("show", ["sys", "version"]) | ("run", ["show", "sys", "version"]) => format!(
            "\nSys::Version\nMain Package\n  Product     {}\n  Version     {}\n  Build       0.0.6\n  Edition     Final\n",
            ctx.st.cfg.product, ctx.st.cfg.version
        ),
        ("list", [module, kind, rest @ ..]) | ("run", ["list", module, kind, rest @ ..]) => {
            list(ctx, module, kind, rest.first().copied())?
        }
        _ => {
            return Err(MgmtError::bad_request(format!(
                "Unsupported command: {command} {args}"
            )));
        }
    };
    Ok(Reply::json(json!({
        "kind": "tm:tmcommandstate",
        "command": command,
        "utilCmdArgs": b.get("utilCmdArgs").cloned().unwrap_or(Value::Null),
        "commandResult": result,
    })))
}

fn list(ctx: &Ctx<'_>, module: &str, kind: &str, name: Option<&str>) -> MgmtResult<String> {
    let path = format!("/mgmt/tm/{module}/{kind}");
    if !crate::objects::REGISTRY.iter().any(|s| s.path == path) {
        return Err(MgmtError::bad_request(format!(
            "Unsupported list target: {module} {kind}"
        )));
    }
    let mut out = String::new();
    for obj in children(ctx.st, &path)? {
        let full_path = obj
            .get("fullPath")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if name
            .is_some_and(|n| n != full_path && Some(n) != obj.get("name").and_then(Value::as_str))
        {
            continue;
        }
        out.push_str(&format!("{module} {kind} {full_path} {{\n"));
        for (k, v) in &obj {
            if matches!(
                k.as_str(),
                "kind" | "name" | "partition" | "fullPath" | "generation" | "selfLink"
            ) {
                continue;
            }
            let text = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out.push_str(&format!("    {k} {text}\n"));
        }
        out.push_str("}\n");
    }
    Ok(out)
}
