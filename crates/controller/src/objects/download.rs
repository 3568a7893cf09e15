//! Ranged downloads of files in the downloads directory:
//! `GET /mgmt/shared/file-transfer/downloads/<name>` with an optional request header
//! `Content-Range: first-last/<anything>` (bigrest, f5-sdk FileDownloadMixin); the answer carries
//! `Content-Range: first-last/<size>`. Administrators and resource administrators only.

use std::io::{Read as _, Seek as _, SeekFrom};

use bytes::Bytes;
use http::Method;

use portcullis_admin::Ctx;
use portcullis_admin::Reply;
use portcullis_admin::check_name;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_admin::{Role, denied};

/// The largest range served in one answer.
const MAX_RANGE: u64 = 8 * 1024 * 1024;

fn requested(v: Option<&str>) -> Option<(u64, u64)> {
    let v = v?.trim();
    let v = v.strip_prefix("bytes").map(str::trim_start).unwrap_or(v);
    let (range, _) = v.split_once('/')?;
    let (a, b) = range.split_once('-')?;
    let (a, b): (u64, u64) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (a <= b).then_some((a, b))
}

pub fn handle(ctx: &Ctx<'_>, _: &[u8]) -> MgmtResult<Reply> {
    if ctx.method != Method::GET {
        return Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        ));
    }
    if !matches!(ctx.user.role, Role::Admin | Role::ResourceAdmin) {
        return Err(denied(&ctx.user.name, &ctx.method, &ctx.path, &ctx.peer));
    }
    // Also serves `/mgmt/tm/asm/file-transfer/downloads/<name>` (exported policies).
    let name = ctx
        .path
        .split_once("/file-transfer/downloads")
        .map_or("", |(_, n)| n)
        .trim_start_matches('/');
    check_name(name)
        .map_err(|_| MgmtError::bad_request(format!("Invalid download file name '{name}'.")))?;
    let path = ctx.st.downloads_dir().join(name);
    let io = |e: std::io::Error| MgmtError::internal(format!("download {name}: {e}"));
    let mut f = std::fs::File::open(&path)
        .map_err(|_| MgmtError::not_found("file", &format!("/var/config/rest/downloads/{name}")))?;
    let size = f.metadata().map_err(io)?.len();
    let header = ctx
        .headers
        .get(http::header::CONTENT_RANGE)
        .and_then(|v| v.to_str().ok());
    let (first, last) = match requested(header) {
        Some((a, b)) => (a, b.min(size.saturating_sub(1)).min(a + MAX_RANGE - 1)),
        None if header.is_some() => {
            return Err(MgmtError::bad_request(
                "Content-Range must be <first>-<last>/<size>.",
            ));
        }
        None => (0, size.saturating_sub(1).min(MAX_RANGE - 1)),
    };
    if size > 0 && first >= size {
        return Err(MgmtError::new(
            http::StatusCode::RANGE_NOT_SATISFIABLE,
            format!("Range starts at {first} but {name} has {size} bytes."),
        ));
    }
    let len = if size == 0 { 0 } else { last - first + 1 };
    let mut buf = Vec::with_capacity(len as usize);
    f.seek(SeekFrom::Start(first)).map_err(io)?;
    f.take(len).read_to_end(&mut buf).map_err(io)?;
    Ok(Reply::bytes(Bytes::from(buf))
        .header(http::header::CONTENT_TYPE, "application/octet-stream")
        .header(
            http::header::CONTENT_RANGE,
            &format!("{first}-{}/{size}", if size == 0 { 0 } else { last }),
        ))
}
